package ingress

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/api"
	"github.com/agentproto/sentinel/ingress/httpapi"
)

// MaxHeaderBytes caps a request's header block (net/http answers 431
// past it, plus its own 4 KiB of slack); the default would be 1 MiB.
const MaxHeaderBytes = 64 << 10

// Config configures the HTTP listener.
type Config struct {
	// Token is the API bearer token: the operator's (api.Operator).
	Token string
	// Principals, when set, authenticates the other bearer tokens (named
	// tokens with scopes).
	Principals api.Authenticator
	// MaxBodyBytes caps API request bodies (default 1 MiB).
	MaxBodyBytes int64
	// BodyReadTimeout bounds how long any request body may take to arrive
	// (default DefaultBodyReadTimeout); requests without a body are never
	// bounded (streams, long-polls).
	BodyReadTimeout time.Duration
	// Hosts is the Host header policy (DNS-rebinding guard) of every route
	// but /healthz and /readyz.
	Hosts HostPolicy
}

// Mounter mounts routes on a router.
type Mounter func(r chi.Router)

// Routes are the sub-routers the server mounts.
type Routes struct {
	// Public routes are not behind the bearer token (push ingress).
	Public []Mounter
	// API routes are behind the bearer token and the body limit.
	API []Mounter
	// Raw routes are behind the bearer token with no body limit (metrics,
	// streams; the MCP transport caps its own POST bodies).
	Raw []Mounter
	// UI routes (the dashboard at /ui) are behind the Host and Origin
	// checks but not the bearer token: they authenticate with their own
	// session cookie and CSRF tokens, and cap their own form bodies.
	UI []Mounter
}

// Server is the node's HTTP server.
type Server struct {
	srv  *http.Server
	ln   net.Listener
	log  *slog.Logger
	once sync.Once
	err  error
}

// NewHandler builds the chi root. Every request gets a node-made request
// id, panic recovery and an access log line. /healthz and /readyz answer
// any Host (probes; they change nothing and reveal only that a node runs).
// Every other route passes, in order: the Host check (403
// forbidden_host), the cross-origin check of state-changing requests (403
// forbidden_origin), the body read deadline, then its group: Public (push
// ingress), the dashboard's cookie (UI), or the bearer token (401) with
// the body cap and the read-only guard of read-scoped tokens (API) or
// without them (Raw: streams, MCP, metrics; MCP tools check the scope in
// the services).
func NewHandler(cfg Config, health api.Health, routes Routes, log *slog.Logger) http.Handler {
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = 1 << 20
	}
	r := chi.NewRouter()
	r.Use(RequestID, middleware.Recoverer, AccessLog(log))
	r.NotFound(func(w http.ResponseWriter, _ *http.Request) {
		httpapi.WriteError(w, sentinel.Errorf(sentinel.CodeNotFound, "no such route"))
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, _ *http.Request) {
		httpapi.WriteError(w, sentinel.Errorf(sentinel.CodeMethodNotAllowed, "method not allowed on this route"))
	})
	mountProbes(r, health)
	r.Group(func(c chi.Router) {
		c.Use(HostCheck(cfg.Hosts), OriginCheck(), BodyDeadline(cfg.BodyReadTimeout))
		c.Group(func(p chi.Router) {
			p.Use(WritesNeedQuorum(health))
			for _, m := range routes.Public {
				m(p)
			}
		})
		for _, m := range routes.UI {
			m(c)
		}
		c.Group(func(g chi.Router) {
			g.Use(BearerAuth(cfg.Token, cfg.Principals))
			g.Group(func(a chi.Router) {
				a.Use(BodyLimit(cfg.MaxBodyBytes), ReadOnly, WritesNeedQuorum(health))
				for _, m := range routes.API {
					m(a)
				}
			})
			for _, m := range routes.Raw {
				m(g)
			}
		})
	})
	return r
}

// Listen opens the listener on addr ("host:port"; port 0 picks a free one).
func Listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	return ln, nil
}

// Serve starts serving h on ln in a goroutine owned by the server.
func Serve(ln net.Listener, h http.Handler, log *slog.Logger) *Server {
	s := &Server{
		// No ReadTimeout on purpose: it would cancel the context of every
		// long GET (SSE streams, ?wait= long-polls, MCP streams). Bodies are
		// bounded per request by BodyDeadline instead.
		srv: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
			MaxHeaderBytes: MaxHeaderBytes, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)},
		ln:  ln,
		log: log,
	}
	go func() {
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("http server stopped", "err", err)
		}
	}()
	return s
}

// Addr returns the listening address.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Shutdown stops accepting, waits for in-flight requests until ctx ends,
// then closes what remains. It is idempotent: later calls return the
// first one's error.
func (s *Server) Shutdown(ctx context.Context) error {
	s.once.Do(func() {
		if err := s.srv.Shutdown(ctx); err != nil {
			_ = s.srv.Close()
			s.err = fmt.Errorf("http shutdown: %w", err)
		}
	})
	return s.err
}
