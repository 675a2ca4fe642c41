package ingress

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5/middleware"
)

// AccessLog logs one line per request (method, path, status, duration,
// request id) at debug level; query strings are never logged.
func AccessLog(log *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
			start := time.Now()
			next.ServeHTTP(ww, r)
			log.Debug("http request", "method", r.Method, "path", r.URL.Path, "status", ww.Status(),
				"duration", time.Since(start), "request_id", middleware.GetReqID(r.Context()))
		})
	}
}
