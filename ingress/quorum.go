package ingress

import (
	"net/http"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/api"
	"github.com/agentproto/sentinel/ingress/httpapi"
)

// WritesNeedQuorum refuses state-changing requests (every method but GET,
// HEAD and OPTIONS) with 503 cluster_unavailable while the node cannot
// store writes, before anything is done: a client or load balancer can
// send the request to another node. Reads are served (from records this
// node already holds).
func WritesNeedQuorum(health api.Health) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.Method {
			case http.MethodGet, http.MethodHead, http.MethodOptions:
			default:
				if err := health.Writable(); err != nil {
					w.Header().Set("Retry-After", "1")
					httpapi.WriteError(w, sentinel.Errorf(sentinel.CodeClusterUnavailable, "%s", err.Error()))
					return
				}
			}
			next.ServeHTTP(w, r)
		})
	}
}
