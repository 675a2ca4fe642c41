package mcp

import (
	"context"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/api"
)

// Tool names of the inbox group.
const (
	ToolInboxRead = "inbox_read"
	ToolInboxWait = "inbox_wait"
)

// Inbox limits of the tools. One call waits at most api.MaxWait (49 s,
// under the ~60 s tool-call timeouts of common clients); a longer
// timeoutMs (up to MaxAskedWaitMs) is capped, and the answer's nextWaitMs
// says how much of it is left for the next call.
const (
	DefaultWaitMs  = 25000
	MaxAskedWaitMs = 3600000
	MaxReadLimit   = 500
	DefaultReadMax = 50
)

// waitFor checks a tool's timeoutMs (default DefaultWaitMs) and returns
// this call's wait (capped at api.MaxWait) and what is left after it.
func waitFor(tool string, timeoutMs *int) (wait, rest time.Duration, bad *mcp.CallToolResult) {
	ms := DefaultWaitMs
	if timeoutMs != nil {
		ms = *timeoutMs
	}
	asked := time.Duration(ms) * time.Millisecond
	if asked < api.MinWait || ms > MaxAskedWaitMs {
		return 0, 0, invalid(tool, "timeoutMs must be within %d..%d (got %d); one call waits at most %d", api.MinWait.Milliseconds(), MaxAskedWaitMs, ms, api.MaxWait.Milliseconds())
	}
	wait = min(asked, api.MaxWait)
	return wait, asked - wait, nil
}

// InboxReadArgs are the inbox_read arguments.
type InboxReadArgs struct {
	SessionID     string  `json:"sessionId,omitempty" jsonschema_description:"Inbox to read. Defaults to the calling session."`
	After         *uint64 `json:"after,omitempty" jsonschema_description:"Read messages after this sequence (default: after the session's read cursor)."`
	Limit         int     `json:"limit,omitempty" jsonschema_description:"At most this many messages, 1 to 500 (default 50)."`
	CorrelationID string  `json:"correlationId,omitempty" jsonschema_description:"Only messages of this thread (e.g. sentinel:github:owner/repo#12)."`
	Ack           bool    `json:"ack,omitempty" jsonschema_description:"Advance the read cursor past the returned messages (default false)."`
}

// InboxWaitArgs are the inbox_wait arguments.
type InboxWaitArgs struct {
	SessionID     string  `json:"sessionId,omitempty" jsonschema_description:"Inbox to wait on. Defaults to the calling session."`
	After         *uint64 `json:"after,omitempty" jsonschema_description:"Wait for messages after this sequence (default: after the session's read cursor)."`
	CorrelationID string  `json:"correlationId,omitempty" jsonschema_description:"Only messages of this thread (e.g. sentinel:github:owner/repo#12)."`
	TimeoutMs     *int    `json:"timeoutMs,omitempty" jsonschema_description:"How long to wait, 1000 to 3600000 ms (default 25000); one call waits at most 49000 and then answers timedOut with nextWaitMs, the rest to wait in the next call. Returns at once when a match is already there."`
	Ack           *bool   `json:"ack,omitempty" jsonschema_description:"Advance the read cursor past the returned messages (default true; ignored with correlationId)."`
}

func inboxTools(svc api.Inboxes, streams api.StreamSlots) []server.ServerTool {
	return []server.ServerTool{
		{
			Tool: mcp.NewTool(ToolInboxRead,
				mcp.WithDescription("Read a session's inbox without waiting: messages oldest first, and the sequence to pass as after next time."),
				inputSchema[InboxReadArgs](),
				annotations("Read an inbox", false, false, false, false),
			),
			Handler: typed(ToolInboxRead, func(ctx context.Context, a InboxReadArgs) *mcp.CallToolResult {
				q, err := inboxQuery(ctx, a.SessionID, a.After, a.CorrelationID, a.Ack)
				if err != nil {
					return fail(ToolInboxRead, err, nil)
				}
				if a.Limit < 0 || a.Limit > MaxReadLimit {
					return invalid(ToolInboxRead, "limit must be within 1..%d (got %d)", MaxReadLimit, a.Limit)
				}
				q.Limit = a.Limit
				if q.Limit == 0 {
					q.Limit = DefaultReadMax
				}
				page, err := svc.Read(ctx, q)
				if err != nil {
					return fail(ToolInboxRead, err, nil)
				}
				return ok(pageFields(page, false))
			}),
		},
		{
			Tool: mcp.NewTool(ToolInboxWait,
				mcp.WithDescription("Wait until a matching message is in a session's inbox (at once when one is already there), up to timeoutMs (one call waits at most 49 s; a timed-out answer's nextWaitMs is the rest to wait). Filter by correlationId to wait on one sentinel's subject: sentinel:<subject>."),
				inputSchema[InboxWaitArgs](),
				annotations("Wait on an inbox", false, false, false, false),
			),
			Handler: typed(ToolInboxWait, func(ctx context.Context, a InboxWaitArgs) *mcp.CallToolResult {
				wait, rest, bad := waitFor(ToolInboxWait, a.TimeoutMs)
				if bad != nil {
					return bad
				}
				ack := a.Ack == nil || *a.Ack
				q, err := inboxQuery(ctx, a.SessionID, a.After, a.CorrelationID, ack)
				if err != nil {
					return fail(ToolInboxWait, err, nil)
				}
				if streams != nil {
					release, err := streams.Acquire(q.SessionID)
					if err != nil {
						return fail(ToolInboxWait, err, nil)
					}
					defer release()
				}
				page, err := svc.Wait(ctx, q, wait)
				if err != nil {
					return fail(ToolInboxWait, err, nil)
				}
				out := pageFields(page, true)
				if out["timedOut"] == true && rest > 0 {
					out["nextWaitMs"] = rest.Milliseconds()
				}
				return ok(out)
			}),
		},
	}
}

// inboxQuery resolves the inbox (the caller's by default) and builds the
// query; acking is only meaningful without a correlation filter.
func inboxQuery(ctx context.Context, session string, after *uint64, correlation string, ack bool) (sentinel.InboxQuery, error) {
	session = strings.TrimSpace(session)
	if session == "" {
		session = CallerFrom(ctx)
	}
	if session == "" {
		return sentinel.InboxQuery{}, sentinel.Errorf(sentinel.CodeNoCallerIdentity,
			"no sessionId given and the caller has no session identity; pass sessionId")
	}
	return sentinel.InboxQuery{SessionID: session, After: after, CorrelationID: correlation, Ack: ack && correlation == ""}, nil
}

func pageFields(p api.InboxPage, wait bool) map[string]any {
	msgs := p.Messages
	if msgs == nil {
		msgs = []sentinel.Message{}
	}
	out := map[string]any{"messages": msgs, "next": p.Next}
	if wait {
		out["timedOut"] = p.TimedOut || len(msgs) == 0
	}
	return out
}
