package ui

import (
	"net/http"
)

// loadAdapters reads the providers and their readiness.
func (h *Handler) loadAdapters(r *http.Request) (string, any, error) {
	list, err := h.cfg.Sentinels.Adapters(r.Context())
	return "Adapters", list, err
}

// loadCluster reads the cluster view (a single node shows itself).
func (h *Handler) loadCluster(r *http.Request) (string, any, error) {
	if h.cfg.Cluster == nil {
		return "Cluster", nil, errUnavailable
	}
	v, err := h.cfg.Cluster.View(r.Context())
	return "Cluster", v, err
}
