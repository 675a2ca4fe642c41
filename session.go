package sentinel

// Session statuses (Session.Status).
const (
	SessionRunning       = "running"
	SessionIdle          = "idle"
	SessionAwaitingInput = "awaiting-input"
	SessionEnded         = "ended"
)

// RegisterSession is the body of POST /sessions and what the registry
// registers. Absent optional fields keep their stored value on an update.
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

// SessionReport is the body of POST /sessions/{id}/events and what the
// registry records: a lifecycle report (Kind: turn-end, awaiting-input,
// exited, crashed).
type SessionReport struct {
	Kind          string `json:"kind"`
	AwaitingInput bool   `json:"awaitingInput,omitempty"`
	Empty         bool   `json:"empty,omitempty"`
	Excerpt       string `json:"excerpt,omitempty"`
	Reason        string `json:"reason,omitempty"`
}

// SessionPR is one PR a session recorded.
type SessionPR struct {
	URL   string `json:"url"`
	State string `json:"state"`
	Title string `json:"title,omitempty"`
	// Ts is the time of the last change (RFC 3339), set by the node.
	Ts string `json:"ts,omitempty"`
}

// Session is a session as every surface shows it (GET /sessions, the
// session tools of MCP). The registry's stored record embeds it and adds
// what only the node reads (its lifecycle outbox, retirement, tombstone).
// A view shows its hooks redacted (RedactHooks): the stored hooks never
// leave the node.
type Session struct {
	ID              string `json:"id"`
	Label           string `json:"label,omitempty"`
	Cwd             string `json:"cwd,omitempty"`
	ParentSessionID string `json:"parentSessionId,omitempty"`
	Status          string `json:"status"`
	EndedReason     string `json:"endedReason,omitempty"`
	CreatedTs       int64  `json:"createdTs"`
	LastSeenTs      int64  `json:"lastSeenTs"`
	HeartbeatTTLMs  int64  `json:"heartbeatTtlMs,omitempty"`
	// Sentinel false opts the session out of PR auto-link.
	Sentinel bool          `json:"sentinel"`
	Hooks    *SessionHooks `json:"hooks,omitempty"`
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
