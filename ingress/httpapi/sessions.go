package httpapi

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/api"
)

// SessionRoutes mounts the session registry routes (DESIGN §6).
func SessionRoutes(r chi.Router, svc api.Sessions) {
	h := sessionHandlers{svc: svc}
	r.Post("/sessions", h.register)
	r.Get("/sessions", h.list)
	r.Get("/sessions/{id}", h.get)
	r.Delete("/sessions/{id}", h.end)
	r.Post("/sessions/{id}/events", h.event)
	r.Post("/sessions/{id}/prs", h.pr)
}

type sessionHandlers struct{ svc api.Sessions }

func (h sessionHandlers) register(w http.ResponseWriter, r *http.Request) {
	var req sentinel.RegisterSession
	if err := Decode(r, &req); err != nil {
		WriteError(w, err)
		return
	}
	if !sentinel.ValidSessionID(req.ID) {
		WriteError(w, sentinel.Errorf(sentinel.CodeInvalidSessionID, "id %q must be "+sentinel.SessionIDRule, req.ID))
		return
	}
	if req.Hooks != nil {
		for name, hk := range map[string]*sentinel.Hook{"resume": req.Hooks.Resume, "notify": req.Hooks.Notify} {
			if hk == nil {
				continue
			}
			if err := hk.Validate(name); err != nil {
				WriteError(w, err)
				return
			}
		}
	}
	s, created, err := h.svc.Register(r.Context(), req)
	if err != nil {
		WriteError(w, err)
		return
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	WriteJSON(w, status, map[string]any{"ok": true, "created": created, "session": s})
}

func (h sessionHandlers) list(w http.ResponseWriter, r *http.Request) {
	ss, err := h.svc.List(r.Context())
	if err != nil {
		WriteError(w, err)
		return
	}
	if ss == nil {
		ss = []sentinel.Session{}
	}
	WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "sessions": ss})
}

func (h sessionHandlers) get(w http.ResponseWriter, r *http.Request) {
	s, err := h.svc.Get(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		WriteError(w, err)
		return
	}
	WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "session": s})
}

func (h sessionHandlers) end(w http.ResponseWriter, r *http.Request) {
	s, err := h.svc.End(r.Context(), chi.URLParam(r, "id"), r.URL.Query().Get("reason"))
	if err != nil {
		WriteError(w, err)
		return
	}
	WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "session": s})
}

func (h sessionHandlers) event(w http.ResponseWriter, r *http.Request) {
	id, ok := pathSession(w, r)
	if !ok {
		return
	}
	var ev sentinel.SessionReport
	if err := Decode(r, &ev); err != nil {
		WriteError(w, err)
		return
	}
	if err := h.svc.ReportEvent(r.Context(), id, ev); err != nil {
		WriteError(w, err)
		return
	}
	WriteJSON(w, http.StatusAccepted, map[string]any{"ok": true})
}

func (h sessionHandlers) pr(w http.ResponseWriter, r *http.Request) {
	id, ok := pathSession(w, r)
	if !ok {
		return
	}
	var pr api.RecordPR
	if err := Decode(r, &pr); err != nil {
		WriteError(w, err)
		return
	}
	if err := h.svc.RecordPR(r.Context(), id, pr); err != nil {
		WriteError(w, err)
		return
	}
	WriteJSON(w, http.StatusAccepted, map[string]any{"ok": true})
}

// pathSession reads and checks the {id} path parameter.
func pathSession(w http.ResponseWriter, r *http.Request) (string, bool) {
	id := chi.URLParam(r, "id")
	if !sentinel.ValidSessionID(id) {
		WriteError(w, sentinel.Errorf(sentinel.CodeInvalidSessionID, "session id %q must be "+sentinel.SessionIDRule, id))
		return "", false
	}
	return id, true
}
