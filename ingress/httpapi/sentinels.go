package httpapi

import (
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/api"
)

// SentinelRoutes mounts the sentinel, adapter and parked routes.
func SentinelRoutes(r chi.Router, svc api.Sentinels) {
	h := sentinelHandlers{svc: svc}
	r.Post("/sentinels", h.create)
	r.Get("/sentinels", h.list)
	r.Post("/sentinels/poll", h.poll)
	r.Get("/sentinels/{id}", h.get)
	r.Delete("/sentinels/{id}", h.remove)
	r.Get("/sentinels/{id}/status", h.status)
	r.Get("/adapters", h.adapters)
	r.Post("/adapters/{slug}/setup", h.setup)
	r.Get("/parked", h.parked)
}

type sentinelHandlers struct{ svc api.Sentinels }

func (h sentinelHandlers) create(w http.ResponseWriter, r *http.Request) {
	var req sentinel.WatchRequest
	if err := Decode(r, &req); err != nil {
		WriteError(w, err)
		return
	}
	if req.SessionID == "" {
		WriteError(w, sentinel.Errorf(sentinel.CodeNoCallerIdentity, "an HTTP caller has no session identity: pass sessionId"))
		return
	}
	if dry, err := boolParam(r, "dryRun"); err != nil || dry {
		if err != nil {
			WriteError(w, err)
			return
		}
		h.dryRun(w, r, req) // journal.go
		return
	}
	v, err := h.svc.Watch(r.Context(), req, "")
	if err != nil {
		WriteError(w, err)
		return
	}
	WriteJSON(w, watchStatus(v), WatchBody(v))
}

// list answers GET /sentinels: every sentinel without paging parameters
// (the pinned API), one page with limit or after; filters apply either way.
func (h sentinelHandlers) list(w http.ResponseWriter, r *http.Request) {
	q, err := ParseSentinelQuery(r.URL.Query())
	if err != nil {
		WriteError(w, err)
		return
	}
	p, err := h.svc.ListPage(r.Context(), q)
	if err != nil {
		WriteError(w, err)
		return
	}
	if p.Sentinels == nil {
		p.Sentinels = []sentinel.View{}
	}
	out := map[string]any{"ok": true, "sentinels": p.Sentinels}
	if p.Next != "" {
		out["next"] = p.Next
	}
	WriteJSON(w, http.StatusOK, out)
}

func (h sentinelHandlers) get(w http.ResponseWriter, r *http.Request) {
	v, err := h.svc.Get(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		WriteError(w, err)
		return
	}
	WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "sentinel": v})
}

func (h sentinelHandlers) remove(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	if err := h.svc.Remove(r.Context(), id); err != nil {
		WriteError(w, err)
		return
	}
	WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "removed": true, "id": id})
}

func (h sentinelHandlers) status(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "id")
	st, err := h.svc.Status(r.Context(), id)
	if err != nil {
		WriteError(w, err)
		return
	}
	WriteJSON(w, http.StatusOK, api.StatusAnswer{OK: true, ID: id, Status: st})
}

func (h sentinelHandlers) poll(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("id")
	v, err := h.svc.PollNow(r.Context(), id)
	if err != nil {
		WriteError(w, err)
		return
	}
	out := map[string]any{"ok": true, "polled": true}
	if v != nil {
		out["sentinel"] = v
	}
	WriteJSON(w, http.StatusOK, out)
}

func (h sentinelHandlers) adapters(w http.ResponseWriter, r *http.Request) {
	as, err := h.svc.Adapters(r.Context())
	if err != nil {
		WriteError(w, err)
		return
	}
	WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "adapters": as})
}

// SetupRequest is the body of POST /adapters/{slug}/setup.
type SetupRequest struct {
	Fields map[string]string `json:"fields"`
}

func (h sentinelHandlers) setup(w http.ResponseWriter, r *http.Request) {
	var req SetupRequest
	if err := Decode(r, &req); err != nil {
		WriteError(w, err)
		return
	}
	res, err := h.svc.Setup(r.Context(), chi.URLParam(r, "slug"), req.Fields)
	if err != nil {
		WriteError(w, err)
		return
	}
	WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "setup": res})
}

func (h sentinelHandlers) parked(w http.ResponseWriter, r *http.Request) {
	limit := 100
	if s := r.URL.Query().Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 1000 {
			WriteError(w, sentinel.Errorf(sentinel.CodeInvalidInput, "limit must be an integer within 1..1000"))
			return
		}
		limit = n
	}
	ps, err := h.svc.Parked(r.Context(), r.URL.Query().Get("sentinel"), limit)
	if err != nil {
		WriteError(w, err)
		return
	}
	if ps == nil {
		ps = []sentinel.Parked{}
	}
	WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "parked": ps})
}

// watchStatus is a watch's HTTP status: 201 for a new sentinel, 200 for
// the one that was already there or the key's, updated.
func watchStatus(v sentinel.View) int {
	if v.Existing || v.Updated {
		return http.StatusOK
	}
	return http.StatusCreated
}

// WatchBody is a watch's answer: the sentinel, existing and updated when
// they hold, and the warnings that say why nothing may come (issue 29).
func WatchBody(v sentinel.View) map[string]any {
	out := map[string]any{"ok": true, "sentinel": v, "existing": v.Existing}
	if v.Updated {
		out["updated"] = true
	}
	if len(v.Warnings) > 0 {
		out["warnings"] = v.Warnings
	}
	return out
}
