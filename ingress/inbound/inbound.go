// Package inbound serves POST /inbound/sentinel-<hookKey>. Before a byte
// of the body is read it shape-checks the hook key and asks the runtime
// whether the key exists (an unknown key is a bare 404, answered at once
// and with the connection closed, so a body that never finishes costs
// nothing); then it checks the declared length against the cap, reads
// the body under the server's body read deadline (408 body_timeout),
// counting its bytes against a node-wide in-flight budget as they arrive
// (503 inbound_busy when what arrived no longer fits), hands the raw bytes to the runtime (whose provider
// verifies the signature before anything is parsed), and answers 200
// once the events are persisted. It is never gated by the API bearer
// token.
package inbound

import (
	"bytes"
	"errors"
	"net/http"
	"os"
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

// maxKeyLen is the longest hook key the route accepts.
const maxKeyLen = 128

// Handler serves push ingress. New builds it.
type Handler struct {
	svc     api.Inbound
	maxBody int64
	now     func() time.Time
	// observe, when set, is called with every answer's status.
	observe func(status int)
	// onStep, when set, is told how long the body read and the handling
	// after it of each request took.
	onStep func(step string, d time.Duration)
	// writable, when set, tells a node cut off from its cluster.
	writable func() error

	maxInFlight int64
	budget      *budget
}

// Option sets one of a handler's optional settings.
type Option func(*Handler)

// WithMaxBody caps one push's body (default DefaultMaxBody).
func WithMaxBody(n int64) Option { return func(h *Handler) { h.maxBody = n } }

// WithMaxInFlight caps the body bytes held at once by all push requests
// together (default DefaultMaxInFlight, never below the body cap).
func WithMaxInFlight(n int64) Option { return func(h *Handler) { h.maxInFlight = n } }

// WithClock stamps each push with now (default time.Now).
func WithClock(now func() time.Time) Option { return func(h *Handler) { h.now = now } }

// WithObserve is called with every answer's status (a metric).
func WithObserve(observe func(status int)) Option {
	return func(h *Handler) { h.observe = observe }
}

// WithStep is told how long the body read (step "ingress_read") and the
// handling after it ("ingress_handle": lookup, verify, parse, publish) of
// each request took.
func WithStep(step func(step string, d time.Duration)) Option {
	return func(h *Handler) { h.onStep = step }
}

// WithWritable tells a node cut off from its cluster: events that could
// not be stored then answer 503 cluster_unavailable (the sender may try
// another node; event ids make that safe), not 500.
func WithWritable(writable func() error) Option {
	return func(h *Handler) { h.writable = writable }
}

// New returns the push ingress handler over svc with opts applied.
func New(svc api.Inbound, opts ...Option) *Handler {
	h := &Handler{svc: svc}
	for _, o := range opts {
		o(h)
	}
	if h.maxBody <= 0 {
		h.maxBody = DefaultMaxBody
	}
	if h.now == nil {
		h.now = time.Now
	}
	limit := h.maxInFlight
	if limit <= 0 {
		limit = DefaultMaxInFlight
	}
	h.budget = &budget{max: max(limit, h.maxBody)}
	return h
}

// Mount mounts the route.
func (h *Handler) Mount(r chi.Router) { r.Post("/inbound/{name}", h.serve) }

func (h *Handler) serve(w http.ResponseWriter, r *http.Request) {
	status := h.handle(w, r)
	if h.observe != nil {
		h.observe(status)
	}
}

func (h *Handler) handle(w http.ResponseWriter, r *http.Request) int {
	key, ok := hookKey(chi.URLParam(r, "name"))
	if !ok {
		return early(w, http.StatusNotFound, "not_found")
	}
	known, err := h.svc.KnownHook(r.Context(), key)
	if err != nil {
		return early(w, http.StatusServiceUnavailable, "unavailable")
	}
	if !known {
		return early(w, http.StatusNotFound, "not_found")
	}
	if r.ContentLength > h.maxBody {
		return early(w, http.StatusRequestEntityTooLarge, "body_too_large")
	}
	start := time.Now()
	body, held, err := h.read(w, r)
	defer h.budget.give(held)
	if err != nil {
		return bodyError(w, err)
	}
	h.step(stepRead, start)
	start = time.Now()
	res, err := h.svc.Inbound(r.Context(), providers.Inbound{HookKey: key, Body: body, Header: r.Header.Clone(), Now: h.now()})
	h.step(stepHandle, start)
	var ie *providers.InboundError
	switch {
	case errors.Is(err, providers.ErrUnknownHook):
		return notFound(w)
	case errors.As(err, &ie):
		httpapi.WriteJSON(w, ie.Status, map[string]any{"error": ie.Code, "reason": ie.Reason})
		return ie.Status
	case err != nil && storageFull(err):
		return unavailable(w, codeStorageFull)
	case err != nil && h.writable != nil && h.writable() != nil:
		code := "cluster_unavailable"
		if storageFull(h.writable()) {
			code = codeStorageFull
		}
		return unavailable(w, code)
	case err != nil && transient(err):
		// The bus did not answer in time (a leader election outlasting
		// the publish's retries, a reconnect): safe to send again, here or
		// at another node (event ids make a stored copy a duplicate).
		return unavailable(w, codeUnavailable)
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

// The step names Step is told (metrics.StepIngressRead and
// metrics.StepIngressHandle).
const (
	stepRead   = "ingress_read"
	stepHandle = "ingress_handle"
)

func (h *Handler) step(step string, start time.Time) {
	if h.onStep != nil {
		h.onStep(step, time.Since(start))
	}
}

// read reads the body within MaxBody, counting its bytes against the
// budget as they arrive (budgetReader), a declared length or not: the
// declared length is checked against the cap before (handle), never
// reserved ahead. held is what was reserved (give it back once the body
// is dropped).
func (h *Handler) read(w http.ResponseWriter, r *http.Request) (body []byte, held int64, err error) {
	br := &budgetReader{r: http.MaxBytesReader(w, r.Body, h.maxBody), b: h.budget}
	var buf bytes.Buffer
	if n := r.ContentLength; n > 0 {
		// A small head start, never the declared length: memory follows
		// what arrived.
		buf.Grow(int(min(n, chunk)))
	}
	_, err = buf.ReadFrom(br)
	return buf.Bytes(), br.held, err
}

// bodyError answers a body that could not be read.
func bodyError(w http.ResponseWriter, err error) int {
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		httpapi.WriteJSON(w, http.StatusRequestEntityTooLarge, map[string]any{"error": "body_too_large"})
		return http.StatusRequestEntityTooLarge
	case errors.Is(err, errBusy):
		w.Header().Set("Retry-After", "1")
		return early(w, http.StatusServiceUnavailable, "inbound_busy")
	case errors.Is(err, os.ErrDeadlineExceeded):
		return early(w, http.StatusRequestTimeout, api.CodeBodyTimeout)
	}
	httpapi.WriteJSON(w, http.StatusBadRequest, map[string]any{"error": "unreadable_body"})
	return http.StatusBadRequest
}

// hookKey returns the key of a route name "sentinel-<key>" when the key
// has the shape of one: 1..128 of [A-Za-z0-9_-].
func hookKey(name string) (string, bool) {
	key, ok := strings.CutPrefix(name, RoutePrefix)
	if !ok || key == "" || len(key) > maxKeyLen {
		return "", false
	}
	for _, c := range []byte(key) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return "", false
		}
	}
	return key, true
}

// early answers before the body was (fully) read and closes the
// connection afterwards, so net/http does not wait to drain what the
// client still sends.
func early(w http.ResponseWriter, status int, code string) int {
	w.Header().Set("Connection", "close")
	httpapi.WriteJSON(w, status, map[string]any{"error": code})
	return status
}

// notFound answers a bare 404 that echoes nothing about hook keys.
func notFound(w http.ResponseWriter) int {
	httpapi.WriteJSON(w, http.StatusNotFound, map[string]any{"error": "not_found"})
	return http.StatusNotFound
}

// codeStorageFull is sentinel.CodeStorageFull, as api.FromError names it.
const codeStorageFull = "storage_full"

// codeUnavailable is sentinel.CodeUnavailable, as api.FromError names it.
const codeUnavailable = "unavailable"

// transient reports whether err says the bus did not answer in time
// (bus.Retryable marked it).
func transient(err error) bool {
	_, body := api.FromError(err)
	return body.Error == codeUnavailable
}

// storageFull reports whether err says the node's storage is full.
func storageFull(err error) bool {
	_, body := api.FromError(err)
	return body.Error == codeStorageFull
}

// unavailable answers 503 with code: nothing was stored, a sender may try
// again later or at another node.
func unavailable(w http.ResponseWriter, code string) int {
	w.Header().Set("Retry-After", "1")
	httpapi.WriteJSON(w, http.StatusServiceUnavailable, map[string]any{"error": code})
	return http.StatusServiceUnavailable
}
