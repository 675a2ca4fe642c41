package httpapi

import (
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/api"
)

// ExplainerRoutes mounts the decision journal's routes: a sentinel's
// decisions, an event's story and the replay of a parked event.
func ExplainerRoutes(r chi.Router, svc api.Explainer) {
	h := explainerHandlers{svc: svc}
	r.Get("/sentinels/{id}/decisions", h.decisions)
	r.Get("/events/{eventId}", h.event)
	r.Post("/parked/{id}/replay", h.replay)
}

type explainerHandlers struct{ svc api.Explainer }

func (h explainerHandlers) decisions(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit := 50
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 1000 {
			WriteError(w, sentinel.Errorf(sentinel.CodeInvalidInput, "limit must be an integer within 1..1000"))
			return
		}
		limit = n
	}
	var after uint64
	if s := q.Get("after"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			WriteError(w, sentinel.Errorf(sentinel.CodeInvalidInput, "after must be the next cursor of a previous page (an unsigned integer)"))
			return
		}
		after = n
	}
	page, err := h.svc.Decisions(r.Context(), chi.URLParam(r, "id"), limit, after)
	if err != nil {
		WriteError(w, err)
		return
	}
	if page.Decisions == nil {
		page.Decisions = []sentinel.Decision{}
	}
	WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "decisions": page.Decisions, "next": page.Next})
}

func (h explainerHandlers) event(w http.ResponseWriter, r *http.Request) {
	story, err := h.svc.Event(r.Context(), chi.URLParam(r, "eventId"))
	if err != nil {
		WriteError(w, err)
		return
	}
	WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "event": story})
}

func (h explainerHandlers) replay(w http.ResponseWriter, r *http.Request) {
	force, err := boolParam(r, "force")
	if err != nil {
		WriteError(w, err)
		return
	}
	res, err := h.svc.Replay(r.Context(), chi.URLParam(r, "id"), force)
	if err != nil {
		WriteError(w, err)
		return
	}
	WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "replay": res})
}

// boolParam reads an optional boolean query parameter (true/false, 1/0).
func boolParam(r *http.Request, name string) (bool, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return false, nil
	}
	v, err := strconv.ParseBool(s)
	if err != nil {
		return false, sentinel.Errorf(sentinel.CodeInvalidInput, "%s must be true or false (got %q)", name, s)
	}
	return v, nil
}

// dryRun answers POST /sentinels?dryRun=true: 200 with what the watch
// would have matched; nothing is created.
func (h sentinelHandlers) dryRun(w http.ResponseWriter, r *http.Request, req sentinel.WatchRequest) {
	dr, ok := h.svc.(api.DryRunner)
	if !ok {
		WriteError(w, sentinel.Errorf(sentinel.CodeNotImplemented, "this node cannot dry-run a watch"))
		return
	}
	res, err := dr.DryRun(r.Context(), req, "")
	if err != nil {
		WriteError(w, err)
		return
	}
	if res.Examples == nil {
		res.Examples = []api.DryRunExample{}
	}
	out := map[string]any{"ok": true, "dryRun": true, "matched": res.Matched, "scanned": res.Scanned,
		"examples": res.Examples, "since": res.Since, "provider": res.Provider, "spec": res.Spec}
	if res.Truncated {
		out["truncated"] = true
	}
	WriteJSON(w, http.StatusOK, out)
}
