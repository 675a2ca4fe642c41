package sentinel

// Follow events: the kinds of the session lifecycle events a follow
// delivers.
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
	// RootOnly defaults to All when absent; a stored follow holds it
	// resolved.
	RootOnly *bool `json:"rootOnly,omitempty"`
	// Exclude is accepted here too and merged into the follow's exclude.
	Exclude *FollowExclude `json:"exclude,omitempty"`
}

// FollowRequest is the body of POST /follows and the session_follow
// parameters. Absent optional fields take their defaults.
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

// Follow is a stored session follow, as every surface shows it.
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
