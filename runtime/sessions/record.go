package sessions

import (
	"time"

	"github.com/agentproto/sentinel"
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

// Session is the stored record of one session: the view every surface
// shows (sentinel.Session) and what only the node reads.
type Session struct {
	sentinel.Session
	RetiredAt int64 `json:"retiredAt,omitempty"`
	// Forgotten marks a removed row (a tombstone): deliveries to it park.
	Forgotten bool `json:"forgotten,omitempty"`
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
	return s.Status != sentinel.SessionEnded && s.HeartbeatTTLMs > 0 && now.UnixMilli()-s.LastSeenTs > s.HeartbeatTTLMs
}

// Effective returns the session as it reads at now: a lapsed heartbeat
// counts as a crash.
func (s Session) Effective(now time.Time) Session {
	if s.Lapsed(now) {
		s.Status = sentinel.SessionEnded
		s.EndedReason = ReasonCrashed
	}
	return s
}

// Alive reports whether the session can take messages at now.
func (s *Session) Alive(now time.Time) bool {
	return !s.Forgotten && s.Status != sentinel.SessionEnded && !s.Lapsed(now)
}

// Retired reports whether no automated path may revive the session: it was
// superseded (continuedTo), retired, or ended for a deliberate reason.
func (s *Session) Retired() bool {
	return s.ContinuedTo != "" || s.RetiredAt != 0 || (s.Status == sentinel.SessionEnded && Deliberate(s.EndedReason))
}

// PR returns the recorded PR with the URL, or nil.
func (s *Session) PR(url string) *sentinel.SessionPR {
	for i := range s.PRs {
		if s.PRs[i].URL == url {
			return &s.PRs[i]
		}
	}
	return nil
}
