package ingress

import (
	"log/slog"
	"net/http"
	"sync/atomic"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/agentproto/sentinel/ingress/api"
	"github.com/agentproto/sentinel/ingress/httpapi"
)

// Gate is a node's root handler from the moment its listener is bound:
// until Open it serves the boot handler (probes answered, every other
// route 503 not_ready), then the node's full handler. A node serves
// /healthz while it waits for its peers, minutes if need be, and /readyz
// says why it is not ready.
type Gate struct {
	h atomic.Pointer[http.Handler]
}

// NewGate returns a gate serving NewBootHandler(health) until Open.
func NewGate(health api.Health, log *slog.Logger) *Gate {
	g := &Gate{}
	boot := NewBootHandler(health, log)
	g.h.Store(&boot)
	return g
}

// Open makes h the handler of every request from now on (requests in
// flight finish on the boot handler).
func (g *Gate) Open(h http.Handler) { g.h.Store(&h) }

// ServeHTTP implements http.Handler.
func (g *Gate) ServeHTTP(w http.ResponseWriter, r *http.Request) { (*g.h.Load()).ServeHTTP(w, r) }

// NewBootHandler is the handler of a node that cannot work yet: /healthz
// 200, /readyz 503 with the reason, and every other route 503 not_ready
// with the reason and Retry-After: 1, before anything is read or done (a
// client may send the same request to another node, as for any 503).
// Every request gets a request id, panic recovery and an access log line.
func NewBootHandler(health api.Health, log *slog.Logger) http.Handler {
	r := chi.NewRouter()
	r.Use(RequestID, middleware.Recoverer, AccessLog(log))
	mountProbes(r, health)
	r.HandleFunc("/*", func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Retry-After", "1")
		httpapi.WriteError(w, notReady(readyErr(health.Ready(req.Context()))))
	})
	return r
}

// readyErr is err, or, when the node turned ready between the gate's
// pick and the check, a starting reason: the boot handler never serves.
func readyErr(err error) error {
	if err == nil {
		return &api.NotReady{Reason: api.ReasonStarting, Message: "the node is opening; send the request again"}
	}
	return err
}
