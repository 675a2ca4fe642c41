// Package inbound serves POST /inbound/sentinel-<hookKey>: it caps the
// body, hands the raw bytes to the runtime (whose provider verifies the
// signature before anything is parsed), and answers 200 once the events
// are persisted. It is never gated by the API bearer token.
package inbound

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/agentproto/sentinel/ingress/api"
	"github.com/agentproto/sentinel/ingress/httpapi"
	"github.com/agentproto/sentinel/providers"
)

// RoutePrefix is the reserved prefix of push-ingress paths.
const RoutePrefix = "sentinel-"

// DefaultMaxBody is GitHub's largest webhook payload (25 MB).
const DefaultMaxBody = 25 << 20

// Handler serves push ingress.
type Handler struct {
	Svc     api.Inbound
	MaxBody int64
	Now     func() time.Time
	// Observe, when set, is called with every answer's status.
	Observe func(status int)
}

// Mount mounts the route.
func (h *Handler) Mount(r chi.Router) {
	r.Post("/inbound/{name}", h.serve)
}

func (h *Handler) serve(w http.ResponseWriter, r *http.Request) {
	status := h.handle(w, r)
	if h.Observe != nil {
		h.Observe(status)
	}
}

func (h *Handler) handle(w http.ResponseWriter, r *http.Request) int {
	name := chi.URLParam(r, "name")
	key, ok := strings.CutPrefix(name, RoutePrefix)
	if !ok || key == "" || len(key) > 128 {
		return notFound(w)
	}
	limit := h.MaxBody
	if limit <= 0 {
		limit = DefaultMaxBody
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			httpapi.WriteJSON(w, http.StatusRequestEntityTooLarge, map[string]any{"error": "body_too_large"})
			return http.StatusRequestEntityTooLarge
		}
		httpapi.WriteJSON(w, http.StatusBadRequest, map[string]any{"error": "unreadable_body"})
		return http.StatusBadRequest
	}
	now := time.Now
	if h.Now != nil {
		now = h.Now
	}
	res, err := h.Svc.Inbound(r.Context(), providers.Inbound{HookKey: key, Body: body, Header: r.Header.Clone(), Now: now()})
	var ie *providers.InboundError
	switch {
	case errors.Is(err, providers.ErrUnknownHook):
		return notFound(w)
	case errors.As(err, &ie):
		httpapi.WriteJSON(w, ie.Status, map[string]any{"error": ie.Code, "reason": ie.Reason})
		return ie.Status
	case err != nil:
		httpapi.WriteJSON(w, http.StatusInternalServerError, map[string]any{"error": "persist_failed"})
		return http.StatusInternalServerError
	case res.Ignored:
		httpapi.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "action": "ignored", "events": 0})
		return http.StatusOK
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"ok": true, "events": res.Events, "sentinels": res.Sentinels, "delivered": res.Delivered})
	return http.StatusOK
}

// notFound answers a bare 404 that echoes nothing about hook keys.
func notFound(w http.ResponseWriter) int {
	httpapi.WriteJSON(w, http.StatusNotFound, map[string]any{"error": "not_found"})
	return http.StatusNotFound
}
