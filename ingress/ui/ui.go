// Package ui is the node's web dashboard at /ui: server-rendered pages
// (html/template, so every value a third party wrote is escaped), plain
// CSS and a little vanilla JavaScript embedded in the binary (no CDN),
// a cookie sign-in with the API token, CSRF tokens on every write the
// cookie authenticates, a strict Content-Security-Policy, and one
// Server-Sent Events stream per page that re-renders the page's live
// regions (docs/dashboard.md). It calls the node only through the
// services of ingress/api.
package ui

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/api"
)

// Defaults of Config.
const (
	// DefaultSessionTTL is how long a sign-in lasts: an hour, since the
	// cookie reaches every port of the host over plain HTTP
	// (docs/dashboard.md, "What the cookie does not protect").
	DefaultSessionTTL = time.Hour
	// DefaultRefresh is how often a page's stream re-reads what its live
	// regions show.
	DefaultRefresh = time.Second
	// DefaultMaxStreams caps the dashboard's open event streams.
	DefaultMaxStreams = 64
	// maxFormBytes caps a form body (sign-in, sign-out, replay).
	maxFormBytes = 16 << 10
)

// Services are the node's services the pages read. Sentinels is
// required; a nil Sessions, Inboxes, Follows, Explainer or Cluster leaves
// its pages saying the node does not offer it.
type Services struct {
	Sentinels api.Sentinels
	Sessions  api.Sessions
	Inboxes   api.Inboxes
	Follows   api.Follows
	Explainer api.Explainer
	Cluster   api.Cluster
}

// Config configures the dashboard.
type Config struct {
	// Token is the node's API token: the sign-in compares against it and
	// the session cookie's key derives from it.
	Token string
	Services
	// SessionTTL is how long a sign-in lasts (default DefaultSessionTTL).
	SessionTTL time.Duration
	// Refresh is how often a page's stream re-reads its regions (default
	// DefaultRefresh).
	Refresh time.Duration
	// MaxStreams caps open event streams (default DefaultMaxStreams; 429
	// past it).
	MaxStreams int
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Sleep waits d or until ctx ends: the delay of a wrong token past the
	// sign-in limit (default a timer; tests record the delays instead).
	Sleep func(ctx context.Context, d time.Duration)
	Log   *slog.Logger
}

// Handler serves the dashboard.
type Handler struct {
	cfg     Config
	signer  *signer
	limiter *loginLimiter
	tmpl    *templates
	streams chan struct{}

	closeOnce sync.Once
	done      chan struct{}
}

// New builds the dashboard's handler; it fails only when the embedded
// templates do not parse.
func New(cfg Config) (*Handler, error) {
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = DefaultSessionTTL
	}
	if cfg.Refresh <= 0 {
		cfg.Refresh = DefaultRefresh
	}
	if cfg.MaxStreams <= 0 {
		cfg.MaxStreams = DefaultMaxStreams
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Sleep == nil {
		cfg.Sleep = sleepCtx
	}
	t, err := parseTemplates()
	if err != nil {
		return nil, err
	}
	return &Handler{cfg: cfg, signer: newSigner(cfg.Token, cfg.SessionTTL, cfg.Now), limiter: newLoginLimiter(cfg.Now),
		tmpl: t, streams: make(chan struct{}, cfg.MaxStreams), done: make(chan struct{})}, nil
}

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// Close ends every open event stream (call it before the HTTP server
// drains, or the drain waits for them). It is idempotent.
func (h *Handler) Close() { h.closeOnce.Do(func() { close(h.done) }) }

// Mount mounts the dashboard at /ui. The routes sit outside the bearer
// token: the cookie authenticates them (pages redirect to the sign-in
// form without it, streams and writes answer 401).
func (h *Handler) Mount(r chi.Router) {
	r.Route("/ui", func(u chi.Router) {
		u.Use(securityHeaders)
		u.Get("/", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/ui/sentinels", http.StatusSeeOther)
		})
		u.Get("/static/*", staticHandler().ServeHTTP)
		u.Get("/login", h.loginForm)
		u.Post("/login", h.login)
		u.Group(func(a chi.Router) {
			a.Use(h.authenticate)
			a.Post("/logout", h.write(h.logout))
			a.Post("/parked/{id}/replay", h.write(h.replay))
			for _, p := range h.pages() {
				a.Get(p.path, h.page(p))
				a.Get(p.path+"/events", h.stream(p))
			}
		})
	})
}

// securityHeaders sets the dashboard's headers on every answer: a strict
// CSP (scripts, styles and connections from the node only, no inline
// script or style, no framing, forms posting only to the node), framing
// refused, no referrer leaving the node, no MIME sniffing, no caching.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", ContentSecurityPolicy)
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("Referrer-Policy", "no-referrer")
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Cross-Origin-Opener-Policy", "same-origin")
		hd.Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}

// ContentSecurityPolicy is the dashboard's Content-Security-Policy.
const ContentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'"

// sessionKey keys the verified session in a request's context.
type sessionKey struct{}

// sessionOf returns the request's verified session (set by authenticate).
func sessionOf(r *http.Request) session {
	s, _ := r.Context().Value(sessionKey{}).(session)
	return s
}

// authenticate lets through requests with a valid session cookie, as
// the operator's principal. Without
// one a page GET is redirected to the sign-in form; a stream or a write
// answers 401.
func (h *Handler) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var value string
		if c, err := r.Cookie(cookieName(r)); err == nil {
			value = c.Value
		}
		sess, err := h.signer.verify(value, listenerPort(r))
		if err != nil {
			if value != "" {
				clearCookie(w, r)
			}
			if r.Method == http.MethodGet && r.Header.Get("Accept") != "text/event-stream" {
				http.Redirect(w, r, "/ui/login", http.StatusSeeOther)
				return
			}
			http.Error(w, "sign in first: "+err.Error(), http.StatusUnauthorized)
			return
		}
		// A dashboard session is the operator's: only the node's own token
		// signs in.
		ctx := api.WithPrincipal(context.WithValue(r.Context(), sessionKey{}, sess), sentinel.Operator())
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// write guards a cookie-authenticated write: the body is capped, it must
// come from a page of this origin (an Origin naming the request's own
// Host, or Sec-Fetch-Site same-origin; the ingress Origin check already
// refused a foreign one) and carry the session's CSRF token (form field
// "csrf"). Anything else is 403.
func (h *Handler) write(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
		if !sameOrigin(r) {
			http.Error(w, "forbidden: a dashboard write must come from a dashboard page (same-origin Origin header)", http.StatusForbidden)
			return
		}
		if err := r.ParseForm(); err != nil {
			http.Error(w, "bad form: "+err.Error(), http.StatusBadRequest)
			return
		}
		if !h.signer.checkCSRF(sessionOf(r), r.PostForm.Get("csrf")) {
			http.Error(w, "forbidden: missing or wrong CSRF token (reload the page)", http.StatusForbidden)
			return
		}
		next(w, r)
	}
}

// sameOrigin reports whether a browser marked the request as sent by a
// page of the node's own origin.
func sameOrigin(r *http.Request) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" {
		return site == "same-origin"
	}
	origin := r.Header.Get("Origin")
	if origin == "" || origin == "null" {
		return false
	}
	scheme := "http://"
	if r.TLS != nil {
		scheme = "https://"
	}
	return origin == scheme+r.Host
}
