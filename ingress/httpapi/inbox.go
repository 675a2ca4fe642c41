package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/api"
)

// InboxRoutes mounts POST /sessions/{id}/messages (an API route: bearer
// and body limit).
func InboxRoutes(r chi.Router, svc api.Inboxes) {
	h := inboxHandlers{svc: svc}
	r.Post("/sessions/{id}/messages", h.send)
}

// InboxReadRoutes mounts the long-poll read and the SSE stream (raw
// routes: bearer only, no body limit, no write deadline). Open streams and
// ?wait= long-polls are capped per session and in all (429
// too_many_streams); a read without wait is never counted.
func InboxReadRoutes(r chi.Router, svc api.Inboxes, cfg StreamConfig) {
	cfg = cfg.withDefaults()
	streams := cfg.Limiter
	if streams == nil {
		streams = NewStreamLimiter(cfg.MaxStreams, cfg.MaxStreamsPerSession)
	}
	h := inboxHandlers{svc: svc, cfg: cfg, streams: streams}
	r.Get("/sessions/{id}/inbox", h.read)
	r.Get("/sessions/{id}/inbox/stream", h.stream)
}

// StreamConfig tunes the SSE stream and the long-polls.
type StreamConfig struct {
	// Heartbeat is the interval of comment heartbeats (default 15 s).
	Heartbeat time.Duration
	// MaxStreams caps the open SSE streams and ?wait= long-polls of the
	// node (default DefaultMaxStreams).
	MaxStreams int
	// MaxStreamsPerSession caps those of one session (default
	// DefaultMaxStreamsPerSession, never above MaxStreams).
	MaxStreamsPerSession int
	// Limiter, when set, is the node's shared limiter (the MCP waits and
	// event streams count against it too); MaxStreams and
	// MaxStreamsPerSession are then its business.
	Limiter *StreamLimiter
}

func (c StreamConfig) withDefaults() StreamConfig {
	if c.Heartbeat <= 0 {
		c.Heartbeat = 15 * time.Second
	}
	if c.Heartbeat < api.MinWait {
		c.Heartbeat = api.MinWait
	}
	if c.Heartbeat > api.MaxWait {
		c.Heartbeat = api.MaxWait
	}
	return c
}

type inboxHandlers struct {
	svc     api.Inboxes
	cfg     StreamConfig
	streams *StreamLimiter
}

// sendBody is POST /sessions/{id}/messages: a from field is refused.
type sendBody struct {
	sentinel.SendMessage
	From json.RawMessage `json:"from,omitempty"`
}

func (h inboxHandlers) send(w http.ResponseWriter, r *http.Request) {
	id, ok := pathSession(w, r)
	if !ok {
		return
	}
	var body sendBody
	if err := Decode(r, &body); err != nil {
		WriteError(w, err)
		return
	}
	if body.From != nil {
		WriteError(w, sentinel.Errorf(sentinel.CodeInvalidInput, "from is computed by the node and cannot be set (from_not_settable)"))
		return
	}
	msg, err := h.svc.Send(r.Context(), id, body.SendMessage, "")
	if err != nil {
		WriteError(w, err)
		return
	}
	WriteJSON(w, http.StatusCreated, map[string]any{"ok": true, "message": msg})
}

func (h inboxHandlers) read(w http.ResponseWriter, r *http.Request) {
	id, ok := pathSession(w, r)
	if !ok {
		return
	}
	q, err := inboxQuery(r, id)
	if err != nil {
		WriteError(w, err)
		return
	}
	var page api.InboxPage
	if ws := r.URL.Query().Get("wait"); ws != "" {
		d, werr := api.ParseWait(ws)
		if werr != nil {
			WriteError(w, werr)
			return
		}
		release, lerr := h.streams.Acquire(id)
		if lerr != nil {
			WriteError(w, lerr)
			return
		}
		defer release()
		ctx, cancel := contextUntil(r, h.svc.Done())
		page, err = h.svc.Wait(ctx, q, d)
		cancel()
	} else {
		page, err = h.svc.Read(r.Context(), q)
	}
	if err != nil {
		WriteError(w, err)
		return
	}
	if page.Messages == nil {
		page.Messages = []sentinel.Message{}
	}
	out := map[string]any{"ok": true, "messages": page.Messages, "next": page.Next}
	if page.TimedOut {
		out["timedOut"] = true
	}
	WriteJSON(w, http.StatusOK, out)
}

// inboxQuery reads after, limit, correlationId, cursor and ack.
func inboxQuery(r *http.Request, id string) (sentinel.InboxQuery, error) {
	v := r.URL.Query()
	q := sentinel.InboxQuery{SessionID: id, CorrelationID: v.Get("correlationId")}
	if s := v.Get("after"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return q, sentinel.Errorf(sentinel.CodeInvalidInput, "after must be a sequence number")
		}
		q.After = &n
	}
	if s := v.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 500 {
			return q, sentinel.Errorf(sentinel.CodeInvalidInput, "limit must be an integer within 1..500")
		}
		q.Limit = n
	}
	if s := v.Get("cursor"); s != "" {
		if !sentinel.ValidCursorName(s) {
			return q, sentinel.Errorf(sentinel.CodeInvalidInput, "cursor must be 1-32 of [a-z0-9_-] (a cursor name)")
		}
		q.Cursor = s
	}
	if s := v.Get("ack"); s != "" {
		b, err := strconv.ParseBool(s)
		if err != nil {
			return q, sentinel.Errorf(sentinel.CodeInvalidInput, "ack must be true or false")
		}
		q.Ack = b
	}
	return q, nil
}

// stream serves SSE: one "message" event per message with id: <seq>,
// resuming after Last-Event-ID (else ?after=, else the read cursor), a
// comment heartbeat while idle; it ends when the client goes away or the
// node stops.
func (h inboxHandlers) stream(w http.ResponseWriter, r *http.Request) {
	id, ok := pathSession(w, r)
	if !ok {
		return
	}
	q, err := inboxQuery(r, id)
	if err != nil {
		WriteError(w, err)
		return
	}
	q.Ack = false
	if le := r.Header.Get("Last-Event-ID"); le != "" {
		n, err := strconv.ParseUint(le, 10, 64)
		if err != nil {
			WriteError(w, sentinel.Errorf(sentinel.CodeInvalidInput, "Last-Event-ID must be a sequence number"))
			return
		}
		q.After = &n
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		WriteError(w, sentinel.Errorf(sentinel.CodeInternal, "streaming is not supported"))
		return
	}
	release, err := h.streams.Acquire(id)
	if err != nil {
		WriteError(w, err)
		return
	}
	defer release()
	// Resolve the start once, so later waits continue from a fixed point.
	first, err := h.svc.Read(r.Context(), q)
	if err != nil {
		WriteError(w, err)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	_, _ = fmt.Fprint(w, ": sentinel inbox stream\nretry: 2000\n\n")
	next := first.Next
	if !writeEvents(w, first.Messages) {
		return
	}
	fl.Flush()
	ctx := r.Context()
	for {
		select {
		case <-ctx.Done():
			return
		case <-h.svc.Done():
			return
		default:
		}
		after := next
		q.After = &after
		page, err := h.waitOrDone(r, q)
		if err != nil {
			return
		}
		if len(page.Messages) == 0 {
			if _, err := fmt.Fprint(w, ": heartbeat\n\n"); err != nil {
				return
			}
		} else if !writeEvents(w, page.Messages) {
			return
		}
		if page.Next > next {
			next = page.Next
		}
		fl.Flush()
	}
}

// waitOrDone waits one heartbeat for new messages, ending early when the
// node stops.
func (h inboxHandlers) waitOrDone(r *http.Request, q sentinel.InboxQuery) (api.InboxPage, error) {
	ctx, cancel := contextUntil(r, h.svc.Done())
	defer cancel()
	return h.svc.Wait(ctx, q, h.cfg.Heartbeat)
}

func writeEvents(w http.ResponseWriter, msgs []sentinel.Message) bool {
	for _, m := range msgs {
		raw, err := json.Marshal(m)
		if err != nil {
			continue
		}
		if _, err := fmt.Fprintf(w, "id: %d\nevent: message\ndata: %s\n\n", m.Seq, raw); err != nil {
			return false
		}
	}
	return true
}

// contextUntil returns the request context, also cancelled when done is
// closed. The watcher goroutine ends with the returned cancel.
func contextUntil(r *http.Request, done <-chan struct{}) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(r.Context())
	go func() {
		select {
		case <-done:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}
