package api

import "context"

// Follow events.
const (
	FollowTurnEnd       = "turn-end"
	FollowAwaitingInput = "awaiting-input"
	FollowExited        = "exited"
	FollowCrashed       = "crashed"
	FollowPROpened      = "pr-opened"
	FollowPRMerged      = "pr-merged"
)

// FollowEvents lists the six follow events in their canonical order.
func FollowEvents() []string {
	return []string{FollowTurnEnd, FollowAwaitingInput, FollowExited, FollowCrashed, FollowPROpened, FollowPRMerged}
}

// FollowExclude never delivers these sessions.
type FollowExclude struct {
	SessionIDs []string `json:"sessionIds,omitempty"`
	Labels     []string `json:"labels,omitempty"`
}

// FollowSelector picks the followed sessions.
type FollowSelector struct {
	SessionIDs []string `json:"sessionIds,omitempty"`
	All        bool     `json:"all,omitempty"`
	CwdPrefix  string   `json:"cwdPrefix,omitempty"`
	// RootOnly defaults to All when absent; it is stored resolved.
	RootOnly *bool `json:"rootOnly,omitempty"`
	// Exclude is accepted here too and merged into the follow's exclude.
	Exclude *FollowExclude `json:"exclude,omitempty"`
}

// FollowRequest is the body of POST /follows and the session_follow
// parameters.
type FollowRequest struct {
	Follower                string         `json:"follower,omitempty"`
	Key                     string         `json:"key,omitempty"`
	Selector                FollowSelector `json:"selector"`
	Exclude                 *FollowExclude `json:"exclude,omitempty"`
	Events                  []string       `json:"events,omitempty"`
	BatchMs                 *int           `json:"batchMs,omitempty"`
	SkipEmptyTurns          *bool          `json:"skipEmptyTurns,omitempty"`
	ExcludeFollowerChildren *bool          `json:"excludeFollowerChildren,omitempty"`
}

// Follow is a stored session follow.
type Follow struct {
	ID                      string         `json:"id"`
	Key                     string         `json:"key,omitempty"`
	Follower                string         `json:"follower"`
	CreatedAt               string         `json:"createdAt"`
	Selector                FollowSelector `json:"selector"`
	Exclude                 *FollowExclude `json:"exclude,omitempty"`
	Events                  []string       `json:"events"`
	BatchMs                 int            `json:"batchMs"`
	SkipEmptyTurns          bool           `json:"skipEmptyTurns"`
	ExcludeFollowerChildren bool           `json:"excludeFollowerChildren"`
}

// Follows is the session-follow service every surface calls. Errors:
// invalid_input, invalid_selector, no_follower, session_not_found (unknown
// follower), follow_not_found.
type Follows interface {
	// Upsert creates a follow, or updates the one with the same key in
	// place (keeping id and createdAt); created tells which. callerSession
	// is the default follower (MCP); HTTP callers pass follower.
	Upsert(ctx context.Context, req FollowRequest, callerSession string) (f Follow, created bool, err error)
	// List returns the follows, of one follower when follower is set.
	List(ctx context.Context, follower string) ([]Follow, error)
	// Remove deletes a follow by id or key and returns its id.
	Remove(ctx context.Context, idOrKey string) (string, error)
}
