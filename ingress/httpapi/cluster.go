package httpapi

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/api"
)

// ClusterRoutes mounts GET /cluster (the operator's view) and POST
// /cluster/remove (remove a lost node).
func ClusterRoutes(r chi.Router, svc api.Cluster) {
	h := clusterHandlers{svc: svc}
	r.Get("/cluster", h.view)
	r.Post("/cluster/remove", h.remove)
}

type clusterHandlers struct{ svc api.Cluster }

func (h clusterHandlers) view(w http.ResponseWriter, r *http.Request) {
	v, err := h.svc.View(r.Context())
	if err != nil {
		WriteError(w, err)
		return
	}
	WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "cluster": v})
}

func (h clusterHandlers) remove(w http.ResponseWriter, r *http.Request) {
	var req api.ClusterRemove
	if err := Decode(r, &req); err != nil {
		WriteError(w, err)
		return
	}
	if req.Node == "" {
		WriteError(w, sentinel.Errorf(sentinel.CodeInvalidInput, "give the node to remove: {\"node\": \"<name>\"} (see GET /cluster)"))
		return
	}
	out, err := h.svc.Remove(r.Context(), req)
	if err != nil {
		WriteError(w, err)
		return
	}
	WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "removed": out})
}
