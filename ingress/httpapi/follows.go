package httpapi

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/api"
)

// FollowRoutes mounts the session-follow routes with the guide's shapes:
// POST /follows answers the follow record (201 created, 200 upserted by
// key), GET /follows {"follows": [...]}, DELETE /follows/{idOrKey}
// {"ok": true, "id": ...}.
func FollowRoutes(r chi.Router, svc api.Follows) {
	h := followHandlers{svc: svc}
	r.Post("/follows", h.upsert)
	r.Get("/follows", h.list)
	r.Delete("/follows/{idOrKey}", h.remove)
}

type followHandlers struct{ svc api.Follows }

func (h followHandlers) upsert(w http.ResponseWriter, r *http.Request) {
	var req sentinel.FollowRequest
	if err := Decode(r, &req); err != nil {
		WriteError(w, asInvalidInput(err))
		return
	}
	f, created, err := h.svc.Upsert(r.Context(), req, "")
	if err != nil {
		WriteError(w, err)
		return
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	WriteJSON(w, status, f)
}

func (h followHandlers) list(w http.ResponseWriter, r *http.Request) {
	fs, err := h.svc.List(r.Context(), r.URL.Query().Get("follower"))
	if err != nil {
		WriteError(w, err)
		return
	}
	if fs == nil {
		fs = []sentinel.Follow{}
	}
	WriteJSON(w, http.StatusOK, map[string]any{"follows": fs})
}

func (h followHandlers) remove(w http.ResponseWriter, r *http.Request) {
	id, err := h.svc.Remove(r.Context(), chi.URLParam(r, "idOrKey"))
	if err != nil {
		WriteError(w, err)
		return
	}
	WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "id": id})
}

// asInvalidInput maps body decoding failures to the guide's invalid_input
// (a too-large or too-slow body keeps its own code).
func asInvalidInput(err error) error {
	if isCode(err, sentinel.CodeBodyTooLarge) || isCode(err, api.CodeBodyTimeout) {
		return err
	}
	return sentinel.Errorf(sentinel.CodeInvalidInput, "%s", err.Error())
}
