package api

import (
	"context"

	"github.com/agentproto/sentinel"
)

// EventStory is the answer of GET /events/{eventId} (with ok): the event
// as the journal knows it, when it was first handled and every decision
// about it, whatever sentinel made it.
type EventStory struct {
	EventID    string              `json:"eventId"`
	Subject    string              `json:"subject"`
	Type       string              `json:"type"`
	Time       string              `json:"time,omitempty"`
	Summary    string              `json:"summary,omitempty"`
	Source     string              `json:"source,omitempty"`
	Provider   string              `json:"provider,omitempty"`
	Terminal   bool                `json:"terminal,omitempty"`
	SelfCaused bool                `json:"selfCaused,omitempty"`
	Received   string              `json:"received"`
	Decisions  []sentinel.Decision `json:"decisions"`
}

// DryRun is the answer of a dry run (POST /sentinels?dryRun=true, with ok
// and dryRun): how many journaled events of the spec's subjects the spec
// would have matched since Since, with a few examples. Nothing is created.
// Truncated says the node read only the newest journal.dry_run_scan
// entries, so Since is later than journal.max_age ago.
type DryRun struct {
	Matched   int             `json:"matched"`
	Scanned   int             `json:"scanned"`
	Truncated bool            `json:"truncated,omitempty"`
	Examples  []DryRunExample `json:"examples"`
	Since     string          `json:"since"`
	Provider  string          `json:"provider"`
	Spec      sentinel.Spec   `json:"spec"`
}

// DryRunExample is one event a dry run matched.
type DryRunExample struct {
	EventID string `json:"eventId"`
	Type    string `json:"type"`
	Subject string `json:"subject"`
	Time    string `json:"time,omitempty"`
	Summary string `json:"summary,omitempty"`
}

// Replay is the answer of POST /parked/{id}/replay (with ok): the parked
// record's id, its sentinel and event, and the decision the re-run took
// (delivered, duplicate when it was already delivered, dead-target when
// the target is still dead, filtered...).
type Replay struct {
	ParkID     string `json:"parkId"`
	SentinelID string `json:"sentinelId"`
	EventID    string `json:"eventId"`
	Decision   string `json:"decision"`
	Reason     string `json:"reason,omitempty"`
	Session    string `json:"session,omitempty"`
	MessageID  string `json:"messageId,omitempty"`
}

// Explainer is the reader service of the decision journal, behind
// explain: a sentinel's decisions, an event's story, and the replay of a
// parked event. Errors are *sentinel.Error values with catalogue codes.
type Explainer interface {
	// Decisions pages a sentinel's decisions: after 0 gives the newest
	// limit, else the first limit after that cursor. A sentinel that is
	// neither known nor journaled is sentinel_not_found.
	Decisions(ctx context.Context, sentinelID string, limit int, after uint64) (sentinel.DecisionPage, error)
	// Event tells an event's story; event_not_found when the journal
	// holds no decision about it.
	Event(ctx context.Context, eventID string) (EventStory, error)
	// Replay re-runs a parked event through the pipeline to its
	// sentinel's current target. Errors: parked_not_found,
	// not_replayable, sentinel_not_found, post_mortem (unless force).
	Replay(ctx context.Context, parkID string, force bool) (Replay, error)
}

// DryRunner is implemented by a Sentinels service that can dry-run a
// watch: validate it fully, resolve the provider, and match the spec
// against the journal without creating anything or calling the
// provider's create.
type DryRunner interface {
	DryRun(ctx context.Context, req sentinel.WatchRequest, callerSession string) (DryRun, error)
}
