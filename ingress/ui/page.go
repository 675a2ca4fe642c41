package ui

import (
	"errors"
	"net/http"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/api"
)

// page is one dashboard page: its route (relative to /ui), its template,
// the live regions its stream re-renders, and the loader of its data.
type page struct {
	path    string
	tmpl    string
	nav     string
	regions []string
	// every is how many stream refreshes pass between two reads (pages
	// whose reads ask providers, such as readiness or provider status,
	// refresh less often); 0 is 1.
	every int
	// load reads the page's data; its error's catalogue code sets the
	// page's status (api.FromError).
	load func(r *http.Request) (title string, data any, err error)
}

// streamingKey marks a request's context as a page's stream.
type streamingKey struct{}

// streaming reports whether r is a page's stream: loaders skip what no
// live region shows (filter choices, an explained event).
func streaming(r *http.Request) bool {
	v, _ := r.Context().Value(streamingKey{}).(bool)
	return v
}

// errUnavailable marks a page whose service the node does not offer.
var errUnavailable = sentinel.Errorf(sentinel.CodeNotFound, "this node does not offer this view")

// viewFor builds a page's view of r (title, data, error message and
// status).
func (h *Handler) viewFor(p page, r *http.Request) (view, int) {
	title, data, err := p.load(r)
	v := view{Title: title, Nav: p.nav, CSRF: h.signer.csrf(sessionOf(r)), Data: data}
	if len(p.regions) > 0 {
		v.Stream = r.URL.EscapedPath() + "/events"
		if r.URL.RawQuery != "" {
			v.Stream += "?" + r.URL.RawQuery
		}
	}
	status := http.StatusOK
	if err != nil {
		status, v.Error = errorText(err)
	}
	return v, status
}

// errorText is what a page shows of an error: the catalogue message of a
// *sentinel.Error (written by the node for its caller), never an internal
// error's text.
func errorText(err error) (int, string) {
	status, body := api.FromError(err)
	var de *sentinel.Error
	if errors.As(err, &de) {
		return status, body.Message
	}
	return status, "The node could not answer (internal error; see its log)."
}

// page serves a page.
func (h *Handler) page(p page) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		v, status := h.viewFor(p, r)
		if status >= 500 {
			h.cfg.Log.Warn("dashboard page failed", "page", p.tmpl, "status", status)
		}
		h.tmpl.render(w, p.tmpl, status, v)
	}
}

// pages lists the dashboard's pages.
func (h *Handler) pages() []page {
	return []page{
		{path: "/sentinels", tmpl: "sentinels", nav: "sentinels", regions: []string{"sentinels"}, load: h.loadSentinels},
		{path: "/sentinels/{id}", tmpl: "sentinel", nav: "sentinels", regions: []string{"status", "decisions"}, every: 5, load: h.loadSentinel},
		{path: "/sessions", tmpl: "sessions", nav: "sessions", regions: []string{"sessions"}, load: h.loadSessions},
		{path: "/sessions/{id}", tmpl: "session", nav: "sessions", regions: []string{"session", "inbox"}, load: h.loadSession},
		{path: "/follows", tmpl: "follows", nav: "follows", regions: []string{"follows"}, every: 2, load: h.loadFollows},
		{path: "/parked", tmpl: "parked", nav: "parked", regions: []string{"parked"}, every: 2, load: h.loadParked},
		{path: "/adapters", tmpl: "adapters", nav: "adapters", regions: []string{"adapters"}, every: 15, load: h.loadAdapters},
		{path: "/cluster", tmpl: "cluster", nav: "cluster", regions: []string{"cluster"}, every: 5, load: h.loadCluster},
	}
}
