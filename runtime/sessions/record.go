package sessions

import (
	"time"
)

// Session statuses.
const (
	StatusRunning       = "running"
	StatusIdle          = "idle"
	StatusAwaitingInput = "awaiting-input"
	StatusEnded         = "ended"
)

// End reasons (AIP-46, session end and retirement). The list is descriptive, not a closed
// validator: any short reason is accepted.
const (
	ReasonDaemonRestart     = "daemon-restart"
	ReasonIdleReaped        = "idle-reaped"
	ReasonCrashed           = "crashed"
	ReasonOperatorCompleted = "operator-completed"
	ReasonOperatorStopped   = "operator-stopped"
	ReasonCostCapExceeded   = "cost-cap-exceeded"
	ReasonPolicyCleanup     = "policy-cleanup"
	ReasonParentExited      = "parent-exited"
	ReasonProviderLimit     = "provider-limit"
	ReasonForgotten         = "forgotten"
	ReasonStewardCompleted  = "steward-completed"
	ReasonStewardAbandoned  = "steward-abandoned"
	ReasonRestarted         = "restarted"
	// ReasonExited is the reason of an exit reported without one.
	ReasonExited = "exited"
)

// Deliberate reports whether an end reason is in the deliberate set: a
// session ended for one of these is never resumed automatically.
func Deliberate(reason string) bool {
	switch reason {
	case ReasonOperatorCompleted, ReasonOperatorStopped, ReasonStewardCompleted, ReasonStewardAbandoned, ReasonRestarted:
		return true
	}
	return false
}

// Hook is a command argv template (no shell) or an http(s) URL.
type Hook struct {
	Command   []string `json:"command,omitempty"`
	URL       string   `json:"url,omitempty"`
	TimeoutMs int      `json:"timeoutMs,omitempty"`
}

// Hooks are a session's resume and notify hooks.
type Hooks struct {
	Resume *Hook `json:"resume,omitempty"`
	Notify *Hook `json:"notify,omitempty"`
}

// PR is one PR a session recorded.
type PR struct {
	URL   string `json:"url"`
	State string `json:"state"`
	Title string `json:"title,omitempty"`
	Ts    string `json:"ts,omitempty"`
}

// Session is the stored record of one session.
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
	Sentinel bool   `json:"sentinel"`
	Hooks    *Hooks `json:"hooks,omitempty"`
	// HomeNode is the node the session last registered through: where its
	// harness lives, so where its command hooks run (see Homes).
	HomeNode    string `json:"homeNode,omitempty"`
	ContinuedTo string `json:"continuedTo,omitempty"`
	RetiredAt   int64  `json:"retiredAt,omitempty"`
	// Forgotten marks a removed row (a tombstone): deliveries to it park.
	Forgotten     bool   `json:"forgotten,omitempty"`
	LastOutput    string `json:"lastOutput,omitempty"`
	LastError     string `json:"lastError,omitempty"`
	NotifyError   string `json:"notifyError,omitempty"`
	NotifyErrorTs int64  `json:"notifyErrorTs,omitempty"`
	PRs           []PR   `json:"prs,omitempty"`
	// Pending is the lifecycle outbox (outbox.go): events decided with a
	// change of this record and not yet published; LifecycleSeq numbers
	// them.
	Pending []LifecycleEvent `json:"pending,omitempty"`
	// EndedTs is when the session last ended (the retention counts from
	// it or the last activity, whichever is later: retention.go).
	EndedTs      int64 `json:"endedTs,omitempty"`
	LifecycleSeq int64 `json:"lifecycleSeq,omitempty"`
}

// Lapsed reports whether the session's heartbeat TTL has passed at now
// while it still claims to be alive.
func (s *Session) Lapsed(now time.Time) bool {
	return s.Status != StatusEnded && s.HeartbeatTTLMs > 0 && now.UnixMilli()-s.LastSeenTs > s.HeartbeatTTLMs
}

// Effective returns the session as it reads at now: a lapsed heartbeat
// counts as a crash.
func (s Session) Effective(now time.Time) Session {
	if s.Lapsed(now) {
		s.Status = StatusEnded
		s.EndedReason = ReasonCrashed
	}
	return s
}

// Alive reports whether the session can take messages at now.
func (s *Session) Alive(now time.Time) bool {
	return !s.Forgotten && s.Status != StatusEnded && !s.Lapsed(now)
}

// Retired reports whether no automated path may revive the session: it was
// superseded (continuedTo), retired, or ended for a deliberate reason.
func (s *Session) Retired() bool {
	return s.ContinuedTo != "" || s.RetiredAt != 0 || (s.Status == StatusEnded && Deliberate(s.EndedReason))
}

// PR returns the recorded PR with the URL, or nil.
func (s *Session) PR(url string) *PR {
	for i := range s.PRs {
		if s.PRs[i].URL == url {
			return &s.PRs[i]
		}
	}
	return nil
}
