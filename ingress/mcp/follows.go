package mcp

import (
	"context"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/api"
)

// Tool names of the follow group.
const (
	ToolFollow   = "session_follow"
	ToolUnfollow = "session_unfollow"
	ToolFollows  = "session_follows"
)

// MaxFollowBatchMs bounds batchMs (10 minutes).
const MaxFollowBatchMs = 600000

// FollowExcludeArgs never deliver these sessions.
type FollowExcludeArgs struct {
	SessionIDs []string `json:"sessionIds,omitempty" jsonschema_description:"Session ids never delivered."`
	Labels     []string `json:"labels,omitempty" jsonschema_description:"Session labels never delivered."`
}

// FollowSelectorArgs pick the followed sessions; at least one of a
// non-empty sessionIds, all true, or cwdPrefix.
type FollowSelectorArgs struct {
	SessionIDs []string `json:"sessionIds,omitempty" jsonschema_description:"Explicit session ids (always match)."`
	All        bool     `json:"all,omitempty" jsonschema_description:"Every session, evaluated at event time (rootOnly defaults to true)."`
	CwdPrefix  string   `json:"cwdPrefix,omitempty" jsonschema_description:"Sessions whose cwd is this path or below."`
	RootOnly   *bool    `json:"rootOnly,omitempty" jsonschema_description:"Skip sessions that have a parent (default: the value of all)."`
}

// FollowArgs are the session_follow arguments.
type FollowArgs struct {
	Follower                string             `json:"follower,omitempty" jsonschema_description:"Session to wake with digests. Defaults to the calling session."`
	Key                     string             `json:"key,omitempty" jsonschema_description:"Caller-chosen key (1-200 chars): re-using it updates that follow in place."`
	Selector                FollowSelectorArgs `json:"selector" jsonschema_description:"Which sessions to follow: at least one of sessionIds, all, cwdPrefix."`
	Exclude                 *FollowExcludeArgs `json:"exclude,omitempty" jsonschema_description:"Sessions never delivered."`
	Events                  []string           `json:"events,omitempty" jsonschema_description:"Events to deliver (default all): turn-end, awaiting-input, exited, crashed, pr-opened, pr-merged."`
	BatchMs                 *int               `json:"batchMs,omitempty" jsonschema_description:"Coalescing window in ms, 0 to 600000 (default 15000; 0 = next tick)."`
	SkipEmptyTurns          *bool              `json:"skipEmptyTurns,omitempty" jsonschema_description:"Drop empty (silent) turns (default true)."`
	ExcludeFollowerChildren *bool              `json:"excludeFollowerChildren,omitempty" jsonschema_description:"Never deliver the follower's own descendants (default true)."`
}

// UnfollowArgs are the session_unfollow arguments.
type UnfollowArgs struct {
	ID string `json:"id" jsonschema_description:"Follow id (fol_...) or key."`
}

// FollowsArgs are the session_follows arguments.
type FollowsArgs struct {
	Follower string `json:"follower,omitempty" jsonschema_description:"List only this follower's follows (default: every follow)."`
}

var followNotFound = map[string]string{sentinel.CodeFollowNotFound: sentinel.CodeNotFound}

func followTools(svc api.Follows) []server.ServerTool {
	return []server.ServerTool{
		{
			Tool: mcp.NewTool(ToolFollow,
				mcp.WithDescription("Follow other sessions: wake the follower with one coalesced digest when sessions matched by the selector end a turn, wait for input, exit, crash, open or merge a PR. Re-using a key updates that follow."),
				inputSchema[FollowArgs](),
				annotations("Follow sessions", false, false, false, false),
			),
			Handler: typed(ToolFollow, func(ctx context.Context, a FollowArgs) *mcp.CallToolResult {
				fr, err := a.request()
				if err != nil {
					return fail(ToolFollow, err, nil)
				}
				f, created, err := svc.Upsert(ctx, fr, CallerFrom(ctx))
				if err != nil {
					return fail(ToolFollow, err, nil)
				}
				return ok(map[string]any{"created": created, "follow": f})
			}),
		},
		{
			Tool: mcp.NewTool(ToolUnfollow,
				mcp.WithDescription("Remove a session follow by id (fol_...) or key. An unknown one is not_found."),
				inputSchema[UnfollowArgs](),
				annotations("Remove a follow", false, true, true, false),
			),
			Handler: typed(ToolUnfollow, func(ctx context.Context, a UnfollowArgs) *mcp.CallToolResult {
				if strings.TrimSpace(a.ID) == "" {
					return invalid(ToolUnfollow, "id is required (a follow id fol_... or its key)")
				}
				id, err := svc.Remove(ctx, a.ID)
				if err != nil {
					return fail(ToolUnfollow, err, followNotFound)
				}
				return ok(map[string]any{"removed": true, "id": id})
			}),
		},
		{
			Tool: mcp.NewTool(ToolFollows,
				mcp.WithDescription("List session follows, optionally of one follower."),
				inputSchema[FollowsArgs](),
				annotations("List follows", true, false, true, false),
			),
			Handler: typed(ToolFollows, func(ctx context.Context, a FollowsArgs) *mcp.CallToolResult {
				fs, err := svc.List(ctx, strings.TrimSpace(a.Follower))
				if err != nil {
					return fail(ToolFollows, err, nil)
				}
				if fs == nil {
					fs = []sentinel.Follow{}
				}
				return ok(map[string]any{"follows": fs})
			}),
		},
	}
}

// request checks what can be checked without the registry and builds the
// service request; the service checks the rest with the same codes.
func (a FollowArgs) request() (sentinel.FollowRequest, error) {
	sel := a.Selector
	if len(sel.SessionIDs) == 0 && !sel.All && strings.TrimSpace(sel.CwdPrefix) == "" {
		return sentinel.FollowRequest{}, sentinel.Errorf(sentinel.CodeInvalidSelector,
			"selector needs at least one of sessionIds (non-empty), all: true, or cwdPrefix")
	}
	valid := sentinel.FollowEvents()
	for _, e := range a.Events {
		if !slices.Contains(valid, e) {
			return sentinel.FollowRequest{}, sentinel.Errorf(sentinel.CodeInvalidInput,
				"events: %q is not a follow event (one of %s)", e, strings.Join(valid, ", "))
		}
	}
	if a.BatchMs != nil && (*a.BatchMs < 0 || *a.BatchMs > MaxFollowBatchMs) {
		return sentinel.FollowRequest{}, sentinel.Errorf(sentinel.CodeInvalidInput, "batchMs must be within 0..%d (got %d)", MaxFollowBatchMs, *a.BatchMs)
	}
	if len(a.Key) > 200 {
		return sentinel.FollowRequest{}, sentinel.Errorf(sentinel.CodeInvalidInput, "key must be at most 200 characters")
	}
	fr := sentinel.FollowRequest{
		Follower: strings.TrimSpace(a.Follower),
		Key:      a.Key,
		Selector: sentinel.FollowSelector{
			SessionIDs: sel.SessionIDs,
			All:        sel.All,
			CwdPrefix:  sel.CwdPrefix,
			RootOnly:   sel.RootOnly,
		},
		Events:                  a.Events,
		BatchMs:                 a.BatchMs,
		SkipEmptyTurns:          a.SkipEmptyTurns,
		ExcludeFollowerChildren: a.ExcludeFollowerChildren,
	}
	if a.Exclude != nil {
		fr.Exclude = &sentinel.FollowExclude{SessionIDs: a.Exclude.SessionIDs, Labels: a.Exclude.Labels}
	}
	return fr, nil
}
