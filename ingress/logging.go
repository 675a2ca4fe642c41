package ingress

import (
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/chi/v5/middleware"
)

// AccessLog logs one line per request (method, path, status, duration,
// request id) at debug level; query strings are never logged and push
// ingress hook keys are redacted.
func AccessLog(log *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
			start := time.Now()
			next.ServeHTTP(ww, r)
			log.Debug("http request", "method", r.Method, "path", redactPath(r.URL.Path), "status", ww.Status(),
				"duration", time.Since(start), "request_id", middleware.GetReqID(r.Context()))
		})
	}
}

// redactPath hides the hook key of push-ingress paths.
func redactPath(p string) string {
	if strings.HasPrefix(p, "/inbound/") {
		return "/inbound/[redacted]"
	}
	return p
}
