package api

import (
	"context"

	"github.com/agentproto/sentinel"
)

// Follows is the session-follow service every surface calls. Errors:
// invalid_input, invalid_selector, no_follower, session_not_found (unknown
// follower), follow_not_found.
type Follows interface {
	// Upsert creates a follow, or updates the one with the same key in
	// place (keeping id and createdAt); created tells which. callerSession
	// is the default follower (MCP); HTTP callers pass follower.
	Upsert(ctx context.Context, req sentinel.FollowRequest, callerSession string) (f sentinel.Follow, created bool, err error)
	// List returns the follows, of one follower when follower is set.
	List(ctx context.Context, follower string) ([]sentinel.Follow, error)
	// Remove deletes a follow by id or key and returns its id.
	Remove(ctx context.Context, idOrKey string) (string, error)
}
