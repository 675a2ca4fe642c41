package sentinel

import (
	"strings"
)

// Spec is a SentinelSpec: what to watch (OR across clauses), when to stop,
// where to deliver, and an optional provider slug and descriptive labels.
type Spec struct {
	Match    []Clause `json:"match"`
	Until    Until    `json:"until"`
	Target   Target   `json:"target"`
	Provider string   `json:"provider,omitempty"`
	Group    string   `json:"group,omitempty"`
	Label    string   `json:"label,omitempty"`
	// MuteSelf is the loop shield: an event the provider's own GitHub
	// identity caused (Event.SelfCaused) is journaled as "self" instead of
	// delivered; terminal events are never muted.
	MuteSelf bool `json:"muteSelf,omitempty"`
	// Key names the watch within its session (WatchRequest.Key): a later
	// watch with the same key updates this sentinel instead of adding one.
	Key string `json:"key,omitempty"`
	// BatchMs, when above 0, is the digest window (WatchRequest.BatchMs):
	// the events of one subject inside it become one inbox message; a
	// terminal event is never held back.
	BatchMs int `json:"batchMs,omitempty"`
}

// MaxBatchMs caps a sentinel's digest window (10 minutes).
const MaxBatchMs = 600000

// CodeInvalidBatch names a batchMs out of 0..MaxBatchMs.
const CodeInvalidBatch = "invalid_batch"

// MaxKeyLen caps a watch key.
const MaxKeyLen = 128

// ValidWatchKey reports whether k is a usable watch key: 1 to MaxKeyLen
// characters of letters, digits and . _ : / # -.
func ValidWatchKey(k string) bool {
	if k == "" || len(k) > MaxKeyLen {
		return false
	}
	for _, r := range k {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._:/#-", r)) {
			return false
		}
	}
	return true
}

// Clause is one match clause: a subject (exact, or a prefix when it ends in
// '*') and optional type globs. Empty Types means the resolved provider's
// default types for the subject.
type Clause struct {
	Subject string   `json:"subject"`
	Types   []string `json:"types,omitempty"`
}

// Until kinds.
const (
	UntilSubjectTerminal = "subject_terminal"
	UntilAt              = "at"
	UntilCount           = "count"
	UntilNever           = "never"
)

// Until is the stop condition, a tagged union on Kind: subject_terminal,
// at{ms} (epoch milliseconds), count{n}, never.
type Until struct {
	Kind string `json:"kind"`
	Ms   int64  `json:"ms,omitempty"`
	N    int    `json:"n,omitempty"`
}

// Target kinds.
const (
	TargetSession = "session"
	TargetRoutine = "routine"
	TargetWebhook = "webhook"
	// TargetMCPEvents delivers to an MCP Events subscriber (SEP-3415):
	// the sentinel behind an events/poll, events/stream or events/subscribe
	// subscription. Its events go to the subscription's feed, never into a
	// session inbox.
	TargetMCPEvents = "mcp-events"
)

// MCP Events delivery modes (Target.Mode of an mcp-events target).
const (
	ModePoll    = "poll"
	ModePush    = "push"
	ModeWebhook = "webhook"
)

// Urgency is an AIP-46 message urgency.
type Urgency string

// The four urgencies; next-turn is the default.
const (
	UrgencyFYI       Urgency = "fyi"
	UrgencyNextTurn  Urgency = "next-turn"
	UrgencySteer     Urgency = "steer"
	UrgencyInterrupt Urgency = "interrupt"
)

// Valid reports whether u is one of the four urgencies.
func (u Urgency) Valid() bool {
	switch u {
	case UrgencyFYI, UrgencyNextTurn, UrgencySteer, UrgencyInterrupt:
		return true
	}
	return false
}

// Urgencies lists the four urgencies from the least to the most urgent.
var Urgencies = []Urgency{UrgencyFYI, UrgencyNextTurn, UrgencySteer, UrgencyInterrupt}

// Rank orders urgencies: fyi 0, next-turn 1, steer 2, interrupt 3 (-1 for
// anything else).
func (u Urgency) Rank() int {
	for i, v := range Urgencies {
		if v == u {
			return i
		}
	}
	return -1
}

// Target is where events are delivered, a tagged union on Kind. Only
// session targets deliver; routine and webhook are frozen shapes that are
// rejected with not_implemented.
type Target struct {
	Kind      string  `json:"kind"`
	SessionID string  `json:"sessionId,omitempty"`
	Urgency   Urgency `json:"urgency,omitempty"`
	RoutineID string  `json:"routineId,omitempty"`
	URL       string  `json:"url,omitempty"`
	// Mode is the delivery mode of an mcp-events target (poll, push,
	// webhook); SubscriptionID names its subscription (a routing handle,
	// not a capability).
	Mode           string `json:"mode,omitempty"`
	SubscriptionID string `json:"subscriptionId,omitempty"`
}

// Limits on a spec.
const (
	MaxClauses     = 32
	MaxTypes       = 64
	MaxTypeLen     = 256
	MaxLabelLen    = 256
	MaxProviderLen = 64
)

// Normalize fills defaults: a session target without urgency gets
// next-turn. It does not validate.
func (s *Spec) Normalize() {
	if s.Target.Kind == TargetSession && s.Target.Urgency == "" {
		s.Target.Urgency = UrgencyNextTurn
	}
}

// Validate checks the spec's shape. Errors are *Error values with named
// codes (invalid_subject, invalid_until, invalid_target, not_implemented,
// invalid_session_id, invalid_urgency, invalid_types, invalid_input).
func (s *Spec) Validate() error {
	if len(s.Match) == 0 {
		return Errorf(CodeMissingSubject, "spec has no match clause")
	}
	if len(s.Match) > MaxClauses {
		return Errorf(CodeInvalidInput, "spec has more than %d match clauses", MaxClauses)
	}
	for i, c := range s.Match {
		if _, err := ParseSubject(c.Subject, true); err != nil {
			return err
		}
		if len(c.Types) > MaxTypes {
			return Errorf(CodeInvalidTypes, "clause %d has more than %d types", i, MaxTypes)
		}
		for _, t := range c.Types {
			if err := ValidateTypeGlob(t); err != nil {
				return err
			}
		}
	}
	if err := s.Until.Validate(); err != nil {
		return err
	}
	if err := s.Target.Validate(); err != nil {
		return err
	}
	if len(s.Provider) > MaxProviderLen {
		return Errorf(CodeUnknownProvider, "provider slug is too long")
	}
	if len(s.Group) > MaxLabelLen || len(s.Label) > MaxLabelLen {
		return Errorf(CodeInvalidInput, "group and label are limited to %d bytes", MaxLabelLen)
	}
	if s.BatchMs < 0 || s.BatchMs > MaxBatchMs {
		return Errorf(CodeInvalidBatch, "batchMs must be within 0..%d (10 minutes; 0 = no digest), got %d", MaxBatchMs, s.BatchMs)
	}
	return nil
}

// Validate checks the until union.
func (u Until) Validate() error {
	switch u.Kind {
	case UntilSubjectTerminal, UntilNever:
		return nil
	case UntilAt:
		if u.Ms <= 0 {
			return Errorf(CodeInvalidUntil, "until.at needs ms, a positive epoch-milliseconds time")
		}
		return nil
	case UntilCount:
		if u.N < 1 {
			return Errorf(CodeInvalidUntil, "until.count needs n >= 1")
		}
		return nil
	case "":
		return Errorf(CodeInvalidUntil, "until.kind is required (subject_terminal, at, count or never)")
	}
	return Errorf(CodeInvalidUntil, "unknown until.kind %q (subject_terminal, at, count or never)", u.Kind)
}

// Validate checks the target union. routine and webhook are frozen shapes
// and are rejected with not_implemented.
func (t Target) Validate() error {
	switch t.Kind {
	case TargetSession:
		if t.SessionID == "" {
			return Errorf(CodeNoCallerIdentity, "target.sessionId is required")
		}
		if !ValidSessionID(t.SessionID) {
			return Errorf(CodeInvalidSessionID, "session id %q must be "+SessionIDRule, t.SessionID)
		}
		if t.Urgency != "" && !t.Urgency.Valid() {
			return Errorf(CodeInvalidUrgency, "urgency %q is not one of fyi, next-turn, steer, interrupt", t.Urgency)
		}
		return nil
	case TargetMCPEvents:
		switch t.Mode {
		case ModePoll, ModePush, ModeWebhook:
		default:
			return Errorf(CodeInvalidTarget, "target.mode %q is not one of poll, push, webhook", t.Mode)
		}
		if t.SubscriptionID == "" || t.SessionID != "" {
			return Errorf(CodeInvalidTarget, "an mcp-events target names its subscription and no session")
		}
		return nil
	case TargetRoutine, TargetWebhook:
		return Errorf(CodeNotImplemented, "not_implemented: %s targets are a frozen shape without delivery", t.Kind)
	case "":
		return Errorf(CodeInvalidTarget, "target.kind is required")
	}
	return Errorf(CodeInvalidTarget, "unknown target.kind %q", t.Kind)
}

// ValidateTypeGlob checks one event-type glob: non-empty, bounded, no
// whitespace. '*' is the only wildcard.
func ValidateTypeGlob(t string) error {
	if t == "" || len(t) > MaxTypeLen || strings.ContainsAny(t, " \t\r\n") {
		return Errorf(CodeInvalidTypes, "event type %q must be a non-empty glob without whitespace, at most %d bytes", t, MaxTypeLen)
	}
	return nil
}
