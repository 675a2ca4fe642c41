package mcp

import (
	"context"
	"io"
	"log/slog"
	"net/http"

	"github.com/mark3labs/mcp-go/server"
)

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
// loopback Host.
func HTTPHandler(s *server.MCPServer, log *slog.Logger) http.Handler {
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return server.NewStreamableHTTPServer(s,
		server.WithHTTPContextFunc(func(ctx context.Context, r *http.Request) context.Context {
			return WithCaller(ctx, CallerOf(r))
		}),
		server.WithStreamableHTTPLogger(log),
	)
}

// ServeStdio serves s over newline-delimited JSON-RPC on in/out until in
// closes or ctx ends. Every call carries caller as the caller session.
func ServeStdio(ctx context.Context, s *server.MCPServer, caller string, in io.Reader, out io.Writer) error {
	ss := server.NewStdioServer(s)
	ss.SetContextFunc(func(ctx context.Context) context.Context { return WithCaller(ctx, caller) })
	return ss.Listen(ctx, in, out)
}
