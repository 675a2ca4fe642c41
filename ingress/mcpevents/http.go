package mcpevents

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
)

// HTTPOptions configure Handler.
type HTTPOptions struct {
	// Principal names the authenticated principal of a request (the node
	// authenticates /mcp with its bearer token before this handler runs).
	Principal func(r *http.Request) string
}

// Handler serves MCP Events in front of next (mcp-go's streamable HTTP
// handler). It expects a POST body already read into memory within the
// node's cap (ingress/mcp does that first).
func Handler(next http.Handler, d Dispatcher, opts HTTPOptions) http.Handler {
	legacy := &legacySessions{ids: map[string]struct{}{}}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if err != nil {
			next.ServeHTTP(w, r)
			return
		}
		req, ok := parse(body)
		if !ok || !req.IsRequest() {
			next.ServeHTTP(w, r)
			return
		}
		if req.Method == methodInitialize {
			initialize(next, w, r, initializeVersion(req.Params) == LegacyRevision, legacy)
			return
		}
		old := IsEvents(req.Method) && req.Revision() == "" && legacy.has(r)
		if !old && (!Modern(req.Revision()) || !(IsEvents(req.Method) || req.Method == methodDiscover)) {
			next.ServeHTTP(w, r)
			return
		}
		if old {
			ctx := r.Context()
			if opts.Principal != nil {
				ctx = WithPrincipal(ctx, opts.Principal(r))
			}
			out := &httpEmitter{w: w}
			d.Dispatch(ctx, body, req, out.emit)
			out.finish()
			return
		}
		if h := r.Header.Get("Mcp-Protocol-Version"); h != req.Revision() {
			writeJSON(w, http.StatusBadRequest, errorResponse(req.ID, &RPCError{Code: CodeHeaderMismatch, Message: "HeaderMismatch",
				Data: map[string]any{"reason": "the Mcp-Protocol-Version header must equal params._meta protocolVersion"}}))
			return
		}
		if req.Method == methodDiscover {
			discover(next, w, r)
			return
		}
		if m := r.Header.Get("Mcp-Method"); m != req.Method {
			writeJSON(w, http.StatusBadRequest, errorResponse(req.ID, &RPCError{Code: CodeHeaderMismatch, Message: "HeaderMismatch",
				Data: map[string]any{"reason": "the Mcp-Method header must equal the request's method"}}))
			return
		}
		ctx := r.Context()
		if opts.Principal != nil {
			ctx = WithPrincipal(ctx, opts.Principal(r))
		}
		out := &httpEmitter{w: w}
		d.Dispatch(ctx, body, req, out.emit)
		out.finish()
	})
}

// maxLegacySessions bounds the remembered LegacyRevision sessions (the
// oldest half is forgotten past it; such a client sends
// Mcp-Protocol-Version: 2025-03-26 or initializes again).
const maxLegacySessions = 10000

// legacySessions remembers the MCP sessions (Mcp-Session-Id) that
// initialized with LegacyRevision.
type legacySessions struct {
	mu    sync.Mutex
	ids   map[string]struct{}
	order []string
}

func (l *legacySessions) add(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.ids[id]; ok {
		return
	}
	if len(l.order) >= maxLegacySessions {
		for _, old := range l.order[:maxLegacySessions/2] {
			delete(l.ids, old)
		}
		l.order = append([]string(nil), l.order[maxLegacySessions/2:]...)
	}
	l.ids[id] = struct{}{}
	l.order = append(l.order, id)
}

// has reports whether r belongs to a LegacyRevision session: its
// Mcp-Protocol-Version header names the revision, or (no header, as a
// client of that revision sends none) its Mcp-Session-Id initialized
// with it.
func (l *legacySessions) has(r *http.Request) bool {
	if v := r.Header.Get("Mcp-Protocol-Version"); v != "" {
		return v == LegacyRevision
	}
	id := r.Header.Get("Mcp-Session-Id")
	if id == "" {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.ids[id]
	return ok
}

// initialize runs an initialize through next, adds the extension to the
// capabilities it answers, and remembers the session when it negotiated
// LegacyRevision.
func initialize(next http.Handler, w http.ResponseWriter, r *http.Request, asked bool, legacy *legacySessions) {
	body, res := patched(next, w, r)
	if asked && res.Header.Get("Mcp-Session-Id") != "" && bytes.Contains(body, []byte(`"protocolVersion":"`+LegacyRevision+`"`)) {
		legacy.add(res.Header.Get("Mcp-Session-Id"))
	}
	w.WriteHeader(res.StatusCode)
	_, _ = w.Write(body)
}

// discover runs server/discover through next and adds the extension to
// the capabilities it answers (a JSON body or an SSE stream).
func discover(next http.Handler, w http.ResponseWriter, r *http.Request) {
	body, res := patched(next, w, r)
	w.WriteHeader(res.StatusCode)
	_, _ = w.Write(body)
}

// patched runs r through next and returns its answer with the extension
// added to the capabilities (a JSON body or an SSE stream), the headers
// copied to w.
func patched(next http.Handler, w http.ResponseWriter, r *http.Request) ([]byte, *http.Response) {
	rec := httptest.NewRecorder()
	next.ServeHTTP(rec, r)
	res := rec.Result()
	body, _ := io.ReadAll(res.Body)
	for k, v := range res.Header {
		if k != "Content-Length" {
			w.Header()[k] = v
		}
	}
	if strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		var out bytes.Buffer
		sc := bufio.NewScanner(bytes.NewReader(body))
		sc.Buffer(make([]byte, 0, 64*1024), 8<<20)
		for sc.Scan() {
			line := sc.Text()
			if data, ok := strings.CutPrefix(line, "data: "); ok {
				line = "data: " + string(withExtension([]byte(data)))
			}
			out.WriteString(line + "\n")
		}
		body = out.Bytes()
	} else {
		body = withExtension(bytes.TrimSpace(body))
	}
	return body, res
}

// httpEmitter answers one JSON body when the first message is the
// response, else an SSE stream of every message.
type httpEmitter struct {
	mu     sync.Mutex
	w      http.ResponseWriter
	sse    bool
	closed bool
}

func (e *httpEmitter) emit(msg []byte) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return context.Canceled
	}
	if !e.sse && isResponse(msg) {
		e.closed = true
		writeJSON(e.w, statusOf(errorCode(msg)), msg)
		return nil
	}
	if !e.sse {
		e.sse = true
		h := e.w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache, no-store")
		h.Set("X-Accel-Buffering", "no")
		e.w.WriteHeader(http.StatusOK)
	}
	if _, err := io.WriteString(e.w, "event: message\ndata: "+string(msg)+"\n\n"); err != nil {
		e.closed = true
		return err
	}
	if f, ok := e.w.(http.Flusher); ok {
		f.Flush()
	}
	return nil
}

func (e *httpEmitter) finish() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.closed = true
}

// statusOf is the HTTP status of a JSON-RPC answer in revision
// 2026-07-28: Method not found 404, malformed requests 400, else 200.
func statusOf(code int) int {
	switch code {
	case CodeMethodNotFound:
		return http.StatusNotFound
	case CodeInvalidParams, CodeHeaderMismatch, -32600, -32700:
		return http.StatusBadRequest
	}
	return http.StatusOK
}

func writeJSON(w http.ResponseWriter, status int, msg []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(msg, '\n'))
}
