package api

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/agentproto/sentinel"
)

// Session statuses.
const (
	SessionRunning       = "running"
	SessionIdle          = "idle"
	SessionAwaitingInput = "awaiting-input"
	SessionEnded         = "ended"
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

// Hook is a session hook: either a command argv template (run without a
// shell; placeholders {sessionId}, {messageId}, {urgency}, {kind} are
// substituted in each argument) or an http(s) URL the node POSTs to.
// On the wire it is an argv array, a URL string, or the object form.
type Hook struct {
	Command []string `json:"command,omitempty"`
	URL     string   `json:"url,omitempty"`
	// TimeoutMs bounds one run (default 10000, at most 120000).
	TimeoutMs int `json:"timeoutMs,omitempty"`
	// Redacted marks a hook in a session view (see Redact). A redacted
	// hook is refused at registration.
	Redacted bool `json:"redacted,omitempty"`
}

// Redact returns the hook as session views show it, without the secrets
// a hook may carry: a URL as scheme://host/path with its userinfo, query
// and fragment replaced by "[redacted]" (sentinel.RedactURL); a command
// as its program (argv[0]) followed, when it has arguments, by one
// "[redacted]" element. Redacted is set; nil stays nil.
func (h *Hook) Redact() *Hook {
	if h == nil {
		return nil
	}
	out := &Hook{TimeoutMs: h.TimeoutMs, Redacted: true}
	if h.URL != "" {
		out.URL = sentinel.RedactURL(h.URL)
	}
	if len(h.Command) > 0 {
		out.Command = []string{h.Command[0]}
		if len(h.Command) > 1 {
			out.Command = append(out.Command, sentinel.Redacted)
		}
	}
	return out
}

// UnmarshalJSON accepts ["argv", ...], "https://url" or the object form.
func (h *Hook) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) > 0 && b[0] == '[':
		var argv []string
		if err := json.Unmarshal(b, &argv); err != nil {
			return err
		}
		*h = Hook{Command: argv}
		return nil
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*h = Hook{URL: s}
		return nil
	}
	type plain Hook
	var p plain
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return err
	}
	*h = Hook(p)
	return nil
}

// Validate checks that exactly one of command and URL is set.
func (h *Hook) Validate(name string) error {
	switch {
	case len(h.Command) == 0 && h.URL == "":
		return sentinel.Errorf(sentinel.CodeInvalidInput, "hooks.%s: give a command argv or a URL", name)
	case len(h.Command) > 0 && h.URL != "":
		return sentinel.Errorf(sentinel.CodeInvalidInput, "hooks.%s: give either a command or a URL, not both", name)
	case h.URL != "" && !strings.HasPrefix(h.URL, "http://") && !strings.HasPrefix(h.URL, "https://"):
		return sentinel.Errorf(sentinel.CodeInvalidInput, "hooks.%s: URL must be http(s)", name)
	case len(h.Command) > 0 && h.Command[0] == "":
		return sentinel.Errorf(sentinel.CodeInvalidInput, "hooks.%s: command is empty", name)
	case h.TimeoutMs < 0 || h.TimeoutMs > 120000:
		return sentinel.Errorf(sentinel.CodeInvalidInput, "hooks.%s: timeoutMs must be within 0..120000", name)
	case h.Redacted:
		return sentinel.Errorf(sentinel.CodeInvalidInput, "hooks.%s: this is a redacted hook from a session view; give the hook itself", name)
	}
	return nil
}

// SessionHooks are a session's optional hooks. Resume revives an ended
// session and prints (command) or returns (URL, JSON {"sessionId"} or
// text) its live id; notify runs when a message lands, with the message
// JSON on stdin or as the body.
type SessionHooks struct {
	Resume *Hook `json:"resume,omitempty"`
	Notify *Hook `json:"notify,omitempty"`
}

// Redact returns the hooks with each one redacted (Hook.Redact).
func (h *SessionHooks) Redact() *SessionHooks {
	if h == nil {
		return nil
	}
	return &SessionHooks{Resume: h.Resume.Redact(), Notify: h.Notify.Redact()}
}

// SessionPR is one PR a session recorded.
type SessionPR struct {
	URL   string `json:"url"`
	State string `json:"state"`
	Title string `json:"title,omitempty"`
	// Ts is the time of the last change (RFC 3339), set by the node.
	Ts string `json:"ts,omitempty"`
}

// Session is the registry view of one session. Every surface shows its
// hooks redacted (RedactHooks): a view never carries a hook's secrets.
type Session struct {
	ID              string        `json:"id"`
	Label           string        `json:"label,omitempty"`
	Cwd             string        `json:"cwd,omitempty"`
	ParentSessionID string        `json:"parentSessionId,omitempty"`
	Status          string        `json:"status"`
	EndedReason     string        `json:"endedReason,omitempty"`
	CreatedTs       int64         `json:"createdTs"`
	LastSeenTs      int64         `json:"lastSeenTs"`
	HeartbeatTTLMs  int64         `json:"heartbeatTtlMs,omitempty"`
	Sentinel        bool          `json:"sentinel"`
	Hooks           *SessionHooks `json:"hooks,omitempty"`
	// HomeNode is the node the session last registered through: its
	// command hooks run there (docs/harness.md).
	HomeNode string `json:"homeNode,omitempty"`
	// ContinuedTo names the session that took over (a resume under a new
	// id); such a session is retired.
	ContinuedTo string `json:"continuedTo,omitempty"`
	// LastOutput is the tail of the session's last reported turn.
	LastOutput string `json:"lastOutput,omitempty"`
	// LastError is the last reported error or crash reason.
	LastError string `json:"lastError,omitempty"`
	// NotifyError is the last failure of the notify hook, NotifyErrorTs
	// its time (ms).
	NotifyError   string      `json:"notifyError,omitempty"`
	NotifyErrorTs int64       `json:"notifyErrorTs,omitempty"`
	PRs           []SessionPR `json:"prs,omitempty"`
}

// RedactHooks returns the session with its hooks redacted
// (SessionHooks.Redact).
func (s Session) RedactHooks() Session {
	s.Hooks = s.Hooks.Redact()
	return s
}

// RegisterSession is the body of POST /sessions. Absent optional fields
// keep their stored value on an update.
type RegisterSession struct {
	ID              string        `json:"id"`
	Label           *string       `json:"label,omitempty"`
	Cwd             *string       `json:"cwd,omitempty"`
	ParentSessionID *string       `json:"parentSessionId,omitempty"`
	Hooks           *SessionHooks `json:"hooks,omitempty"`
	HeartbeatTTLMs  *int64        `json:"heartbeatTtlMs,omitempty"`
	// Sentinel false opts the session out of PR auto-link.
	Sentinel *bool `json:"sentinel,omitempty"`
}

// SessionEvent is the body of POST /sessions/{id}/events.
type SessionEvent struct {
	Kind          string `json:"kind"`
	AwaitingInput bool   `json:"awaitingInput,omitempty"`
	Empty         bool   `json:"empty,omitempty"`
	Excerpt       string `json:"excerpt,omitempty"`
	Reason        string `json:"reason,omitempty"`
}

// RecordPR is the body of POST /sessions/{id}/prs.
type RecordPR struct {
	URL   string `json:"url"`
	State string `json:"state"`
	Title string `json:"title,omitempty"`
}

// Sessions is the session registry every surface calls. Errors are
// *sentinel.Error values: invalid_session_id, invalid_input,
// session_not_found. Every Session it returns has its hooks redacted
// (Session.RedactHooks): the stored hooks never leave the node.
type Sessions interface {
	// Register creates (created = true) or updates a session. Registering
	// an ended session revives it.
	Register(ctx context.Context, req RegisterSession) (s Session, created bool, err error)
	// List returns every session, oldest first.
	List(ctx context.Context) ([]Session, error)
	// Get returns one session (session_not_found when unknown).
	Get(ctx context.Context, id string) (Session, error)
	// End ends a session with a reason (default operator-stopped). The
	// reason "forgotten" removes the row: later deliveries to it park.
	End(ctx context.Context, id, reason string) (Session, error)
	// ReportEvent records a lifecycle report and publishes it on the
	// lifecycle stream. An unknown session is registered implicitly.
	ReportEvent(ctx context.Context, id string, ev SessionEvent) error
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
