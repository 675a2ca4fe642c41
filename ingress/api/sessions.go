package api

import (
	"context"
	"strconv"
	"time"

	"github.com/agentproto/sentinel"
)

// Lifecycle report kinds accepted by POST /sessions/{id}/events.
const (
	EventTurnEnd       = "turn-end"
	EventAwaitingInput = "awaiting-input"
	EventExited        = "exited"
	EventCrashed       = "crashed"
)

// PR states accepted by POST /sessions/{id}/prs.
const (
	PROpen   = "open"
	PRMerged = "merged"
	PRClosed = "closed"
)

// RecordPR is the body of POST /sessions/{id}/prs.
type RecordPR struct {
	URL   string `json:"url"`
	State string `json:"state"`
	Title string `json:"title,omitempty"`
}

// Sessions is the session registry every surface calls. Errors are
// *sentinel.Error values: invalid_session_id, invalid_input,
// session_not_found. Every Session it returns has its hooks redacted
// (sentinel.Session.RedactHooks): the stored hooks never leave the node.
type Sessions interface {
	// Register creates (created = true) or updates a session. Registering
	// an ended session revives it.
	Register(ctx context.Context, req sentinel.RegisterSession) (s sentinel.Session, created bool, err error)
	// List returns every session, oldest first.
	List(ctx context.Context) ([]sentinel.Session, error)
	// Get returns one session (session_not_found when unknown).
	Get(ctx context.Context, id string) (sentinel.Session, error)
	// End ends a session with a reason (default operator-stopped). The
	// reason "forgotten" removes the row: later deliveries to it park.
	End(ctx context.Context, id, reason string) (sentinel.Session, error)
	// ReportEvent records a lifecycle report and publishes it on the
	// lifecycle stream. An unknown session is registered implicitly.
	ReportEvent(ctx context.Context, id string, ev sentinel.SessionReport) error
	// RecordPR records PR activity: pr-opened for a new PR, pr-merged when
	// it reaches merged, and PR auto-link. An unknown session is
	// registered implicitly.
	RecordPR(ctx context.Context, id string, pr RecordPR) error
}

// ParseWait parses the wait query value: a Go duration ("25s") or a
// number of seconds, bounded to MinWait..MaxWait.
func ParseWait(s string) (time.Duration, error) {
	var d time.Duration
	if secs, err := strconv.ParseFloat(s, 64); err == nil {
		d = time.Duration(secs * float64(time.Second))
	} else if d, err = time.ParseDuration(s); err != nil {
		return 0, sentinel.Errorf(sentinel.CodeInvalidInput, "wait %q must be a duration (25s) or a number of seconds", s)
	}
	if d < MinWait || d > MaxWait {
		return 0, sentinel.Errorf(sentinel.CodeInvalidInput, "wait must be within 1s..49s")
	}
	return d, nil
}
