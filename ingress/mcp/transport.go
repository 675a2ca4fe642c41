package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"

	"github.com/mark3labs/mcp-go/server"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/api"
)

// DefaultMaxBody caps /mcp request bodies when HTTPHandler is given none
// (the API body cap's default).
const DefaultMaxBody = 1 << 20

// HeaderSession carries the caller's session id on /mcp requests.
const HeaderSession = "X-Agentproto-Session"

// QuerySession is the query parameter carrying the caller's session id on
// /mcp requests (it wins over the header).
const QuerySession = "callerSessionId"

// CallerOf returns the caller session id of an HTTP request: the
// callerSessionId query parameter, else the X-Agentproto-Session header.
func CallerOf(r *http.Request) string {
	if s := r.URL.Query().Get(QuerySession); s != "" {
		return s
	}
	return r.Header.Get(HeaderSession)
}

// HTTPHandler serves s over streamable HTTP (both the stateless 2026-07-28
// era and the initialize-handshake eras). The caller identity is read per
// request by CallerOf; the MCP session id is never used for it. mcp-go's
// DNS-rebinding protection stays on: a request over loopback must name a
// loopback Host. POST bodies are capped at maxBody bytes (DefaultMaxBody
// when <= 0) before mcp-go sees them (it reads the whole body): over the
// cap the answer is the API's 400 body_too_large, and nothing is
// processed. Each of wrap, in order, wraps mcp-go's handler inside the
// cap (the MCP Events layer, ingress/mcpevents).
func HTTPHandler(s *server.MCPServer, log *slog.Logger, maxBody int64, wrap ...func(http.Handler) http.Handler) http.Handler {
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if maxBody <= 0 {
		maxBody = DefaultMaxBody
	}
	h := server.NewStreamableHTTPServer(s,
		server.WithHTTPContextFunc(func(ctx context.Context, r *http.Request) context.Context {
			return WithCaller(ctx, CallerOf(r))
		}),
		server.WithStreamableHTTPLogger(log),
	)
	var out http.Handler = h
	for _, w := range wrap {
		out = w(out)
	}
	return capBody(out, maxBody)
}

// capBody reads a POST body within n bytes before next runs, refusing a
// larger one (declared or sent) with 400 body_too_large and a body that
// outlives the server's body read deadline with 408 body_timeout.
func capBody(next http.Handler, n int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		if r.ContentLength > n {
			w.Header().Set("Connection", "close")
			writeError(w, sentinel.Errorf(sentinel.CodeBodyTooLarge, "request body is larger than %d bytes", n))
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, n))
		var mbe *http.MaxBytesError
		switch {
		case errors.As(err, &mbe):
			writeError(w, sentinel.Errorf(sentinel.CodeBodyTooLarge, "request body is larger than %d bytes", n))
			return
		case errors.Is(err, os.ErrDeadlineExceeded):
			w.Header().Set("Connection", "close")
			writeError(w, sentinel.Errorf(api.CodeBodyTimeout, "request body did not arrive within the body read timeout"))
			return
		case err != nil:
			w.Header().Set("Connection", "close")
			writeError(w, sentinel.Errorf(sentinel.CodeMalformedJSON, "request body could not be read"))
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	})
}

// writeError writes the API's error body ({"error","message"}) for err.
func writeError(w http.ResponseWriter, err error) {
	status, body := api.FromError(err)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

// ServeStdio serves s over newline-delimited JSON-RPC on in/out until in
// closes or ctx ends. Every call carries caller as the caller session.
func ServeStdio(ctx context.Context, s *server.MCPServer, caller string, in io.Reader, out io.Writer) error {
	ss := server.NewStdioServer(s)
	ss.SetContextFunc(func(ctx context.Context) context.Context { return WithCaller(ctx, caller) })
	return ss.Listen(ctx, in, out)
}
