// Package mcp is the MCP surface of a node: the sentinel, adapter, follow
// and inbox tools (mark3labs/mcp-go) over the ingress/api service
// interfaces, served over streamable HTTP at /mcp on the node and over
// stdio by the `sentinel mcp` bridge. The two transports share this one
// tool layer: in the node the services are the runtime's in-process
// adapters, in the bridge they are ingress/apiclient implementations.
//
// Every tool answers {"ok":true,...} or, with isError set,
// {"ok":false,"error":<code>,"message":"<tool>: ..."}. Arguments are
// validated in the handlers (not by mcp-go's schema validation) so the
// messages are readable. The caller's session identity comes from the
// transport (a query parameter or header over HTTP, --session over
// stdio), never from the MCP session id.
package mcp

import (
	"context"
	"log/slog"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/api"
)

// Name is the server name announced to clients.
const Name = "sentinel"

// Services are the service interfaces the tools call. Sentinels is
// required; the tools of a nil service are not registered.
type Services struct {
	Sentinels api.Sentinels
	Follows   api.Follows
	Inbox     api.Inboxes
	// Explainer backs sentinel_explain (explain.go).
	Explainer api.Explainer
	// Streams, when set, caps inbox_wait calls with the node's other
	// long-held requests (a wait holds a slot of its session).
	Streams api.StreamSlots
}

// Options configure the server.
type Options struct {
	// Version is announced to clients (default "dev").
	Version string
	// Log, when set, logs every request and tool call at info level
	// (mcp-go's request logger); nil logs nothing.
	Log *slog.Logger
	// Debug, when set, logs the start of every tool call at debug level
	// (tool name only, never arguments).
	Debug *slog.Logger
	// Caller, when set, resolves the calling session of a call whose
	// transport named none (the stdio bridge's --session auto).
	Caller func(ctx context.Context) string
	// Life, when set, bounds every tool call: when it ends (the node is
	// stopping) a long call such as inbox_wait returns at once with the
	// error "unavailable" instead of holding the shutdown.
	Life context.Context
	// Experimental, when set, is announced as capabilities.experimental
	// (the stdio bridge's Claude Code channel: {"claude/channel": {}}).
	Experimental map[string]any
	// Instructions, when set, is appended to the server's instructions.
	Instructions string
}

// NewServer builds the MCP server with every tool whose service is set.
func NewServer(svc Services, opts Options) *server.MCPServer {
	if opts.Version == "" {
		opts.Version = "dev"
	}
	instructions := "Sentinel watches subjects (GitHub pull requests, repositories, ...) and delivers matching events " +
		"into agent session inboxes. Use sentinel_watch to start a watch, inbox_wait to block on deliveries."
	if opts.Instructions != "" {
		instructions += " " + opts.Instructions
	}
	sopts := []server.ServerOption{
		server.WithToolCapabilities(false),
		server.WithRecovery(),
		server.WithInstructions(instructions),
	}
	if len(opts.Experimental) > 0 {
		sopts = append(sopts, server.WithExperimental(opts.Experimental))
	}
	if opts.Log != nil {
		sopts = append(sopts, server.WithLogger(opts.Log))
	}
	s := server.NewMCPServer(Name, opts.Version, sopts...)
	for _, t := range Tools(svc) {
		s.AddTool(t.Tool, traced(opts.Debug, t.Tool.Name, resolved(opts.Caller, bounded(opts.Life, t.Tool.Name, t.Handler))))
	}
	return s
}

// resolved fills in the caller with resolve when the transport named none.
func resolved(resolve func(ctx context.Context) string, h server.ToolHandlerFunc) server.ToolHandlerFunc {
	if resolve == nil {
		return h
	}
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if CallerFrom(ctx) == "" {
			if id := resolve(ctx); id != "" {
				ctx = WithCaller(ctx, id)
			}
		}
		return h(ctx, req)
	}
}

// traced logs the start of each call of a tool at debug level.
func traced(log *slog.Logger, tool string, h server.ToolHandlerFunc) server.ToolHandlerFunc {
	if log == nil {
		return h
	}
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		log.Debug("mcp tool call", "tool", tool)
		return h(ctx, req)
	}
}

// bounded cancels a call's context when life ends, and reports the call
// as unavailable when that is why it failed.
func bounded(life context.Context, tool string, h server.ToolHandlerFunc) server.ToolHandlerFunc {
	if life == nil {
		return h
	}
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		stop := context.AfterFunc(life, cancel)
		defer stop()
		res, err := h(ctx, req)
		if life.Err() != nil && (err != nil || res == nil || res.IsError) {
			return fail(tool, sentinel.Errorf(sentinel.CodeUnavailable, "the node is stopping; call again once it is back"), nil), nil
		}
		return res, err
	}
}

// Tools returns the tool definitions and handlers for the given services,
// in listing order.
func Tools(svc Services) []server.ServerTool {
	var out []server.ServerTool
	if svc.Sentinels != nil {
		out = append(out, sentinelTools(svc.Sentinels)...)
		out = append(out, adapterTools(svc.Sentinels)...)
	}
	if svc.Explainer != nil {
		out = append(out, explainTools(svc.Explainer)...)
	}
	if svc.Follows != nil {
		out = append(out, followTools(svc.Follows)...)
	}
	if svc.Inbox != nil {
		out = append(out, inboxTools(svc.Inbox, svc.Streams)...)
	}
	if svc.Sentinels != nil && svc.Inbox != nil {
		out = append(out, waitEventTools(svc.Sentinels, svc.Inbox, svc.Streams)...)
	}
	return out
}

type callerKey struct{}

// WithCaller returns ctx carrying the caller's session id.
func WithCaller(ctx context.Context, sessionID string) context.Context {
	return context.WithValue(ctx, callerKey{}, sessionID)
}

// CallerFrom returns the caller's session id carried by ctx, or "".
func CallerFrom(ctx context.Context) string {
	s, _ := ctx.Value(callerKey{}).(string)
	return s
}
