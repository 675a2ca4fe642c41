package ui

import (
	"net/http"
	"slices"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/api"
)

// maxQuery bounds the free-text search; maxRows bounds the rows the
// sentinels table shows (the filters narrow the rest).
const (
	maxQuery = 200
	maxRows  = 500
)

// sentinelFilter is the sentinels page's query: status, provider, session
// (exact filters of the API) and q, a case-insensitive search over the
// id, label, group, target session and match subjects.
type sentinelFilter struct {
	Status   string
	Provider string
	Session  string
	Q        string
}

// sentinelRow is one row of the sentinels table.
type sentinelRow struct {
	sentinel.View
	// Health is "ok", "error" (a last error) or the status when it is not
	// active.
	Health   string
	Subjects []string
}

// sentinelsData is the sentinels page's data.
type sentinelsData struct {
	Filter sentinelFilter
	Rows   []sentinelRow
	// Matched counts the sentinels the filters and the search select
	// (Rows holds at most maxRows of them); Total those the filters
	// select.
	Matched   int
	Total     int
	Statuses  []string
	Providers []string
}

// loadSentinels reads the sentinels page: every sentinel the filters
// select, oldest first.
func (h *Handler) loadSentinels(r *http.Request) (string, any, error) {
	qv := r.URL.Query()
	f := sentinelFilter{Status: qv.Get("status"), Provider: qv.Get("provider"), Session: qv.Get("session"), Q: qv.Get("q")}
	d := sentinelsData{Filter: f, Statuses: []string{string(sentinel.StatusActive), string(sentinel.StatusPaused),
		string(sentinel.StatusExpired), string(sentinel.StatusOrphaned), string(sentinel.StatusError)}}
	if len(f.Q) > maxQuery {
		return "Sentinels", d, sentinel.Errorf(sentinel.CodeInvalidInput, "search must be at most %d bytes", maxQuery)
	}
	if !streaming(r) {
		if ads, err := h.cfg.Sentinels.Adapters(r.Context()); err == nil {
			for _, a := range ads {
				d.Providers = append(d.Providers, a.Slug)
			}
		}
	}
	q := api.SentinelQuery{Status: sentinel.Status(f.Status), Provider: f.Provider, Session: f.Session}
	if err := q.Validate(); err != nil {
		return "Sentinels", d, err
	}
	page, err := h.cfg.Sentinels.ListPage(r.Context(), q)
	if err != nil {
		return "Sentinels", d, err
	}
	needle := strings.ToLower(f.Q)
	for _, v := range page.Sentinels {
		row := sentinelRow{View: v, Health: health(v)}
		for _, c := range v.Match {
			row.Subjects = append(row.Subjects, c.Subject)
		}
		if needle == "" || matches(needle, v, row.Subjects) {
			d.Matched++
			if len(d.Rows) < maxRows {
				d.Rows = append(d.Rows, row)
			}
		}
	}
	d.Total = len(page.Sentinels)
	return "Sentinels", d, nil
}

// health summarises a sentinel for the list.
func health(v sentinel.View) string {
	switch {
	case v.LastError != "":
		return "error"
	case len(v.Warnings) > 0 && v.Status.Pollable():
		// Why nothing may come: a provider not ready, no hook (issue 29).
		return "warning"
	case v.Status == sentinel.StatusActive:
		return "ok"
	}
	return string(v.Status)
}

// matches reports whether the lower-cased needle occurs in the sentinel's
// id, label, group, target session or a subject.
func matches(needle string, v sentinel.View, subjects []string) bool {
	hay := append([]string{v.ID, v.Label, v.Group, v.Target.SessionID, v.Provider}, subjects...)
	return slices.ContainsFunc(hay, func(s string) bool { return strings.Contains(strings.ToLower(s), needle) })
}

// sentinelData is the one-sentinel page's data.
type sentinelData struct {
	View       sentinel.View
	Status     *api.SentinelStatus
	StatusErr  string
	Decisions  []sentinel.Decision
	JournalErr string
	// Story is the explain output of ?event=<id>.
	Story    *api.EventStory
	StoryErr string
	EventID  string
}

// decisionsShown is how many recent decisions the page lists.
const decisionsShown = 50

// loadSentinel reads one sentinel: its view, its provider's status, its
// recent decisions (newest last) and, with ?event=, one event's story.
func (h *Handler) loadSentinel(r *http.Request) (string, any, error) {
	id := chi.URLParam(r, "id")
	v, err := h.cfg.Sentinels.Get(r.Context(), id)
	if err != nil {
		return "Sentinel", nil, err
	}
	d := sentinelData{View: v}
	if st, err := h.cfg.Sentinels.Status(r.Context(), id); err == nil {
		d.Status = &st
	} else {
		_, d.StatusErr = errorText(err)
	}
	if h.cfg.Explainer == nil {
		d.JournalErr = "This node keeps no decision journal."
	} else if pg, err := h.cfg.Explainer.Decisions(r.Context(), id, decisionsShown, 0); err == nil {
		d.Decisions = pg.Decisions
	} else {
		_, d.JournalErr = errorText(err)
	}
	if ev := r.URL.Query().Get("event"); ev != "" && h.cfg.Explainer != nil && !streaming(r) {
		d.EventID = ev
		if len(ev) > 200 {
			d.StoryErr = "event id too long"
		} else if st, err := h.cfg.Explainer.Event(r.Context(), ev); err == nil {
			d.Story = &st
		} else {
			_, d.StoryErr = errorText(err)
		}
	}
	title := "Sentinel " + v.ID
	if v.Label != "" {
		title += " (" + v.Label + ")"
	}
	return title, d, nil
}
