package ingress

import (
	"errors"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/api"
	"github.com/agentproto/sentinel/ingress/httpapi"
)

// mountProbes mounts /healthz and /readyz, which answer any Host (probes:
// they change nothing and reveal only that a node runs and why it cannot
// work yet).
//
// /healthz is liveness: 200 whenever the process serves HTTP, from the
// moment its listener is bound, ready or not (an orchestrator must not
// kill a node that is only waiting for its peers). /readyz is readiness:
// 200 once the node can work, else 503 {"ok":false,"error":"not_ready",
// "reason","message",...} (api.NotReady).
func mountProbes(r chi.Router, health api.Health) {
	r.Get("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		httpapi.WriteJSON(w, http.StatusOK, map[string]any{"ok": true})
	})
	r.Get("/readyz", func(w http.ResponseWriter, req *http.Request) {
		if err := health.Ready(req.Context()); err != nil {
			httpapi.WriteJSON(w, http.StatusServiceUnavailable, readyzBody{Error: api.CodeNotReady, NotReady: notReady(err)})
			return
		}
		httpapi.WriteJSON(w, http.StatusOK, map[string]any{"ok": true})
	})
}

// readyzBody is /readyz's 503 answer.
type readyzBody struct {
	OK    bool   `json:"ok"`
	Error string `json:"error"`
	*api.NotReady
}

// notReady names why a node is not ready: the api.NotReady it gave, else
// the code of its error (storage_full, cluster_unavailable), else
// unavailable.
func notReady(err error) *api.NotReady {
	var nr *api.NotReady
	if errors.As(err, &nr) {
		return nr
	}
	var de *sentinel.Error
	if errors.As(err, &de) && de.Code != sentinel.CodeInternal {
		return &api.NotReady{Reason: de.Code, Message: de.Error()}
	}
	return &api.NotReady{Reason: api.ReasonUnavailable, Message: err.Error()}
}
