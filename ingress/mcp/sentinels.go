package mcp

import (
	"context"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/api"
)

// Tool names of the sentinel group.
const (
	ToolWatch   = "sentinel_watch"
	ToolList    = "sentinel_list"
	ToolUnwatch = "sentinel_unwatch"
	ToolPollNow = "sentinel_poll_now"
)

// notFound renames the REST not-found code to the spec's tool code.
var notFound = map[string]string{sentinel.CodeSentinelNotFound: sentinel.CodeNotFound}

// WatchArgs are the sentinel_watch arguments.
type WatchArgs struct {
	Subject   string   `json:"subject,omitempty" jsonschema_description:"Subject to watch, <scheme>:<path> (github:owner/repo#12 a pull request, github:owner/repo a repository; a trailing * is a prefix match). Exclusive with prUrl."`
	PRURL     string   `json:"prUrl,omitempty" jsonschema_description:"Pull request URL (https://github.com/owner/repo/pull/12): watches the PR with the default PR event types until it closes. Exclusive with subject."`
	SessionID string   `json:"sessionId,omitempty" jsonschema_description:"Session whose inbox receives the events. Defaults to the calling session."`
	Types     []string `json:"types,omitempty" jsonschema_description:"Event-type globs (github.check_suite.completed, github.pull_request.*). Default: the provider's defaults for the subject."`
	Urgency   string   `json:"urgency,omitempty" jsonschema:"enum=fyi,enum=next-turn,enum=steer,enum=interrupt" jsonschema_description:"Inbox urgency of deliveries (default next-turn)."`
	Until     string   `json:"until,omitempty" jsonschema:"enum=subject_terminal,enum=never" jsonschema_description:"Stop condition: subject_terminal (when the PR closes; default for prUrl) or never (default for subject)."`
	Provider  string   `json:"provider,omitempty" jsonschema_description:"Provider slug (local-gh, webhook, agentpush). Default: the best ready provider."`
	Group     string   `json:"group,omitempty" jsonschema_description:"Descriptive group."`
	Label     string   `json:"label,omitempty" jsonschema_description:"Descriptive label."`
	MuteSelf  *bool    `json:"muteSelf,omitempty" jsonschema_description:"Loop shield: do not wake the session for events the provider's own GitHub identity caused (its own pushes, comments, reviews); they are journaled as self. Terminal events (merge, close) always deliver. Default false (true for PR auto-links)."`
	Key       string   `json:"key,omitempty" jsonschema_description:"Optional name of this watch within the session: watching again with the same key returns or updates that sentinel (upsert) instead of adding one."`
	BatchMs   int      `json:"batchMs,omitempty" jsonschema_description:"Digest window in ms, 0 to 600000 (10 minutes; default 0: one message per event). The events of one subject inside the window become one message stating the subject's new state, with every event in its data, at their highest urgency; terminal events (merge, close) are never held back."`
	// AllowDuplicate asks for a new sentinel even when an equal one exists.
	AllowDuplicate bool `json:"allowDuplicate,omitempty" jsonschema_description:"Create another sentinel even when an active one of the session already watches the same clauses, until and urgency (by default that one is returned with existing: true)."`
	DryRun         bool `json:"dryRun,omitempty" jsonschema_description:"Validate fully, resolve the provider and count the journaled events (of the last journal.max_age) this watch would have matched, with examples; nothing is created."`
}

// IDArgs carry one sentinel id.
type IDArgs struct {
	ID string `json:"id" jsonschema_description:"Sentinel id (sen_...)."`
}

// PollArgs are the sentinel_poll_now arguments.
type PollArgs struct {
	ID string `json:"id,omitempty" jsonschema_description:"Sentinel id whose post-poll state to return; every pollable sentinel is polled regardless."`
}

// ListArgs are the sentinel_list arguments: optional filters, all of
// which must match. The answer keeps the spec's shape: every matching
// sentinel, unpaged.
type ListArgs struct {
	Status   string `json:"status,omitempty" jsonschema:"enum=active,enum=paused,enum=expired,enum=orphaned,enum=error" jsonschema_description:"Only sentinels with this status."`
	Provider string `json:"provider,omitempty" jsonschema_description:"Only sentinels of this provider slug (local-gh, webhook, agentpush)."`
	Session  string `json:"session,omitempty" jsonschema_description:"Only sentinels delivering to this session's inbox."`
	Subject  string `json:"subject,omitempty" jsonschema_description:"Only sentinels with a clause whose subject starts with this prefix (github:owner/repo matches the repository and its PRs)."`
}

// NoArgs is the argument set of tools without parameters.
type NoArgs struct{}

func sentinelTools(svc api.Sentinels) []server.ServerTool {
	return []server.ServerTool{
		{
			Tool: mcp.NewTool(ToolWatch,
				mcp.WithDescription("Create a sentinel: a persistent watch over a subject (or a pull request URL) that delivers matching events into a session's inbox. Give exactly one of subject or prUrl."),
				inputSchema[WatchArgs](),
				annotations("Watch a subject", false, false, true, true),
			),
			Handler: watchHandler(svc),
		},
		{
			Tool: mcp.NewTool(ToolList,
				mcp.WithDescription("List every sentinel on the node: id, provider, status, match, until, target, counters and last error. Optional filters (status, provider, session, subject prefix) narrow the list."),
				inputSchema[ListArgs](),
				annotations("List sentinels", true, false, true, false),
			),
			Handler: typed(ToolList, func(ctx context.Context, a ListArgs) *mcp.CallToolResult {
				q := api.SentinelQuery{Status: sentinel.Status(strings.TrimSpace(a.Status)), Provider: strings.TrimSpace(a.Provider),
					Session: strings.TrimSpace(a.Session), SubjectPrefix: strings.TrimSpace(a.Subject)}
				var vs []sentinel.View
				var err error
				if q == (api.SentinelQuery{}) {
					vs, err = svc.List(ctx)
				} else if err = q.Validate(); err == nil {
					var p api.SentinelPage
					p, err = svc.ListPage(ctx, q)
					vs = p.Sentinels
				}
				if err != nil {
					return fail(ToolList, err, nil)
				}
				if vs == nil {
					vs = []sentinel.View{}
				}
				return ok(map[string]any{"sentinels": vs})
			}),
		},
		{
			Tool: mcp.NewTool(ToolUnwatch,
				mcp.WithDescription("Remove a sentinel: cancel its provider-side watch (best effort) and delete the record. An unknown id is not_found."),
				inputSchema[IDArgs](),
				annotations("Remove a sentinel", false, true, true, true),
			),
			Handler: typed(ToolUnwatch, func(ctx context.Context, a IDArgs) *mcp.CallToolResult {
				if strings.TrimSpace(a.ID) == "" {
					return invalid(ToolUnwatch, "id is required (a sentinel id from sentinel_list)")
				}
				if err := svc.Remove(ctx, a.ID); err != nil {
					return fail(ToolUnwatch, err, notFound)
				}
				return ok(map[string]any{"removed": true, "id": a.ID})
			}),
		},
		{
			Tool: mcp.NewTool(ToolPollNow,
				mcp.WithDescription("Run one poll tick now over every poll-capable sentinel. With id, return that sentinel's state after the poll (an unknown id is not_found)."),
				inputSchema[PollArgs](),
				annotations("Poll now", false, false, true, true),
			),
			Handler: typed(ToolPollNow, func(ctx context.Context, a PollArgs) *mcp.CallToolResult {
				v, err := svc.PollNow(ctx, strings.TrimSpace(a.ID))
				if err != nil {
					return fail(ToolPollNow, err, notFound)
				}
				out := map[string]any{"polled": true}
				if v != nil {
					out["sentinel"] = v
				}
				return ok(out)
			}),
		},
	}
}

func watchHandler(svc api.Sentinels) server.ToolHandlerFunc {
	return typed(ToolWatch, func(ctx context.Context, a WatchArgs) *mcp.CallToolResult {
		wr, err := a.request()
		if err != nil {
			return fail(ToolWatch, err, nil)
		}
		if a.DryRun {
			return dryRun(ctx, svc, wr) // dryrun.go
		}
		v, err := svc.Watch(ctx, wr, CallerFrom(ctx))
		if err != nil {
			return fail(ToolWatch, err, nil)
		}
		out := map[string]any{"sentinel": v, "existing": v.Existing}
		if v.Updated {
			out["updated"] = true
		}
		if len(v.Warnings) > 0 {
			out["warnings"] = v.Warnings
		}
		return ok(out)
	})
}

// request validates the arguments the tool surface restricts (urgency and
// the two until kinds) and builds the service request; the service checks
// the rest with the spec's codes.
func (a WatchArgs) request() (sentinel.WatchRequest, error) {
	wr := sentinel.WatchRequest{
		Subject:   strings.TrimSpace(a.Subject),
		PRURL:     strings.TrimSpace(a.PRURL),
		SessionID: strings.TrimSpace(a.SessionID),
		Types:     a.Types,
		Provider:  strings.TrimSpace(a.Provider),
		Group:     a.Group,
		Label:     a.Label,
		MuteSelf:  a.MuteSelf,
		Key:       strings.TrimSpace(a.Key),
		BatchMs:   a.BatchMs,
		// AllowDuplicate: another sentinel even when an equal one exists.
		AllowDuplicate: a.AllowDuplicate,
	}
	if a.Urgency != "" {
		u := sentinel.Urgency(a.Urgency)
		if !u.Valid() {
			return wr, sentinel.Errorf(sentinel.CodeInvalidUrgency, "urgency must be one of fyi, next-turn, steer, interrupt (got %q)", a.Urgency)
		}
		wr.Urgency = u
	}
	if a.Until != "" {
		kind := sentinel.UntilKindAlias(a.Until)
		if kind != sentinel.UntilSubjectTerminal && kind != sentinel.UntilNever {
			return wr, sentinel.Errorf(sentinel.CodeInvalidUntil, "until must be subject_terminal or never (got %q)", a.Until)
		}
		wr.Until = &sentinel.UntilArg{Until: sentinel.Until{Kind: kind}}
	}
	for i, t := range a.Types {
		if strings.TrimSpace(t) == "" {
			return wr, sentinel.Errorf(sentinel.CodeInvalidTypes, "types[%d] is empty; give event-type globs such as github.pull_request.closed", i)
		}
	}
	return wr, nil
}
