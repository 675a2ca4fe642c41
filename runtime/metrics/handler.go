package metrics

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// RefreshTimeout bounds one gauge refresh run before a scrape.
const RefreshTimeout = 2 * time.Second

// Handler returns the /metrics handler (Prometheus text or protobuf by
// content negotiation). refresh, when set, is run before a scrape so the
// gauges that are sampled rather than counted (consumer pending, inbox
// depth, GitHub quota) are current. Refreshes run one at a time, each
// under RefreshTimeout. A nil m answers 404.
func (m *Metrics) Handler(refresh func(ctx context.Context)) http.Handler {
	if m == nil {
		return http.NotFoundHandler()
	}
	prom := promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{})
	var mu sync.Mutex
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if refresh != nil {
			mu.Lock()
			ctx, cancel := context.WithTimeout(r.Context(), RefreshTimeout)
			refresh(ctx)
			cancel()
			mu.Unlock()
		}
		prom.ServeHTTP(w, r)
	})
}
