package httpapi

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/agentproto/sentinel/ingress/api"
)

// TokenRoutes mounts the named tokens (admin only; the service refuses
// others with forbidden_scope): POST /tokens creates one and answers it
// once, GET /tokens lists them (never a secret), DELETE /tokens/{name}
// revokes one.
func TokenRoutes(r chi.Router, svc api.Tokens) {
	h := tokenHandlers{svc: svc}
	r.Post("/tokens", h.create)
	r.Get("/tokens", h.list)
	r.Delete("/tokens/{name}", h.revoke)
}

type tokenHandlers struct{ svc api.Tokens }

func (h tokenHandlers) create(w http.ResponseWriter, r *http.Request) {
	var req api.TokenRequest
	if err := Decode(r, &req); err != nil {
		WriteError(w, err)
		return
	}
	out, err := h.svc.Create(r.Context(), req)
	if err != nil {
		WriteError(w, err)
		return
	}
	WriteJSON(w, http.StatusCreated, map[string]any{"ok": true, "token": out.Token, "principal": out.View})
}

func (h tokenHandlers) list(w http.ResponseWriter, r *http.Request) {
	out, err := h.svc.List(r.Context())
	if err != nil {
		WriteError(w, err)
		return
	}
	if out == nil {
		out = []api.TokenView{}
	}
	WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "tokens": out})
}

func (h tokenHandlers) revoke(w http.ResponseWriter, r *http.Request) {
	name := chi.URLParam(r, "name")
	if err := h.svc.Revoke(r.Context(), name); err != nil {
		WriteError(w, err)
		return
	}
	WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "revoked": name})
}
