package ui

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/agentproto/sentinel"
)

// parkedShown is how many parked records the parked page lists.
const parkedShown = 200

// loadParked reads the parked journal (?sentinel= narrows it).
func (h *Handler) loadParked(r *http.Request) (string, any, error) {
	id := r.URL.Query().Get("sentinel")
	if len(id) > 200 {
		return "Parked events", nil, sentinel.Errorf(sentinel.CodeInvalidInput, "sentinel id too long")
	}
	list, err := h.cfg.Sentinels.Parked(r.Context(), id, parkedShown)
	return "Parked events", list, err
}

// replay re-runs a parked event (POST /ui/parked/{id}/replay, behind
// write; form field force=on to override the post-mortem rule) and
// answers the parked page with the outcome.
func (h *Handler) replay(w http.ResponseWriter, r *http.Request) {
	p := h.parkedPage()
	if h.cfg.Explainer == nil {
		v, _ := h.viewFor(p, r)
		v.Error = "This node cannot replay (no decision journal)."
		h.tmpl.render(w, p.tmpl, http.StatusNotFound, v)
		return
	}
	id := chi.URLParam(r, "id")
	res, err := h.cfg.Explainer.Replay(r.Context(), id, r.PostForm.Get("force") == "on")
	v, status := h.viewFor(p, r)
	v.Stream = "/ui/parked/events"
	if err != nil {
		status, v.Error = errorText(err)
	} else {
		v.Notice = "Replayed " + res.ParkID + ": " + res.Decision
		if res.Reason != "" {
			v.Notice += " (" + res.Reason + ")"
		}
		if res.Session != "" {
			v.Notice += ", to session " + res.Session
		}
	}
	h.tmpl.render(w, p.tmpl, status, v)
}

// parkedPage is the parked page's entry of pages.
func (h *Handler) parkedPage() page {
	for _, p := range h.pages() {
		if p.tmpl == "parked" {
			return p
		}
	}
	panic("ui: no parked page") // pages lists it
}
