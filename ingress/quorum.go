package ingress

import (
	"errors"
	"net/http"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/api"
	"github.com/agentproto/sentinel/ingress/httpapi"
)

// WritesNeedQuorum refuses state-changing requests (every method but GET,
// HEAD and OPTIONS) with 503 while the node cannot store writes
// (cluster_unavailable, or storage_full when its storage is full), before anything is done: a client or load balancer can
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
					httpapi.WriteError(w, unwritable(err))
					return
				}
			}
			next.ServeHTTP(w, r)
		})
	}
}

// unwritable names why the node cannot write: the code Writable gave
// (storage_full), else cluster_unavailable.
func unwritable(err error) error {
	var de *sentinel.Error
	if errors.As(err, &de) {
		return de
	}
	return sentinel.Errorf(sentinel.CodeClusterUnavailable, "%s", err.Error())
}
