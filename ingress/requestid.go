package ingress

import (
	"context"
	"crypto/rand"
	"net/http"

	"github.com/go-chi/chi/v5/middleware"
)

// RequestID gives every request an id of the node's own making (read back
// with chi's middleware.GetReqID, logged by AccessLog). Unlike chi's
// middleware.RequestID it never takes a client's X-Request-Id: on
// /inbound the sender is anyone on the network, and no API client sends
// one, so a caller-chosen id would only let a caller forge or collide log
// correlation. The id is random (crypto/rand.Text) and not echoed.
func RequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := context.WithValue(r.Context(), middleware.RequestIDKey, rand.Text())
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}
