package sentinel

import (
	"bytes"
	"encoding/json"
)

// WatchRequest is the sentinel_watch parameter set (and the body of
// POST /sentinels): exactly one of Subject or PRURL, plus optional types,
// urgency, until, provider and descriptive group and label.
type WatchRequest struct {
	Subject   string    `json:"subject,omitempty"`
	PRURL     string    `json:"prUrl,omitempty"`
	SessionID string    `json:"sessionId,omitempty"`
	Types     []string  `json:"types,omitempty"`
	Urgency   Urgency   `json:"urgency,omitempty"`
	Until     *UntilArg `json:"until,omitempty"`
	Provider  string    `json:"provider,omitempty"`
	Group     string    `json:"group,omitempty"`
	Label     string    `json:"label,omitempty"`
	Match     []Clause  `json:"match,omitempty"`
	// MuteSelf sets the loop shield (Spec.MuteSelf); unset is false (the
	// sessions' PR auto-link sets it true).
	MuteSelf *bool `json:"muteSelf,omitempty"`
	// AllowDuplicate creates a new sentinel even when an active one of the
	// same session already has this target, clauses, until and urgency
	// (by default that one is returned, marked existing).
	AllowDuplicate bool `json:"allowDuplicate,omitempty"`
	// Key names the watch within its session: a watch with the key of an
	// active sentinel of the session updates that sentinel in place (its
	// clauses, until, urgency, group, label) instead of creating one.
	Key string `json:"key,omitempty"`
	// BatchMs opts into digests (Spec.BatchMs): 0..MaxBatchMs, unset or 0
	// is one message per event.
	BatchMs int `json:"batchMs,omitempty"`
}

// UntilArg accepts either a kind string ("subject_terminal", "never", or
// "closed" as an alias of subject_terminal) or the full until object.
type UntilArg struct{ Until }

// UnmarshalJSON accepts a string or an object.
func (u *UntilArg) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		u.Until = Until{Kind: UntilKindAlias(s)}
		return nil
	}
	return json.Unmarshal(b, &u.Until)
}

// MarshalJSON writes the until object.
func (u UntilArg) MarshalJSON() ([]byte, error) { return json.Marshal(u.Until) }

// UntilKindAlias maps the CLI alias "closed" to subject_terminal.
func UntilKindAlias(s string) string {
	if s == "closed" {
		return UntilSubjectTerminal
	}
	return s
}

// Expand turns the request into a validated Spec. callerSession is the
// trusted identity of the caller (MCP), used when SessionID is empty.
// prUrl expands to github:<owner>/<repo>#<n> with the default PR types and
// until subject_terminal unless given; a raw subject defaults to until
// never. Errors are *Error values: missing_subject, ambiguous_subject,
// invalid_pr_url, no_caller_identity, and the Spec.Validate codes.
func (r *WatchRequest) Expand(callerSession string) (Spec, error) {
	var spec Spec
	hasSubject := r.Subject != "" || len(r.Match) > 0
	switch {
	case hasSubject && r.PRURL != "":
		return Spec{}, Errorf(CodeAmbiguousSubject, "give either subject or prUrl, not both")
	case r.Subject != "" && len(r.Match) > 0:
		return Spec{}, Errorf(CodeAmbiguousSubject, "give either subject or match, not both")
	case r.PRURL != "":
		ref, err := ParsePRURL(r.PRURL)
		if err != nil {
			return Spec{}, err
		}
		types := r.Types
		if len(types) == 0 {
			types = DefaultPRTypes()
		}
		spec.Match = []Clause{{Subject: ref.Subject(), Types: types}}
		spec.Until = Until{Kind: UntilSubjectTerminal}
	case r.Subject != "":
		spec.Match = []Clause{{Subject: r.Subject, Types: r.Types}}
		spec.Until = Until{Kind: UntilNever}
	case len(r.Match) > 0:
		spec.Match = append([]Clause(nil), r.Match...)
		spec.Until = Until{Kind: UntilNever}
	default:
		return Spec{}, Errorf(CodeMissingSubject, "give a subject (e.g. github:owner/repo#12) or a prUrl")
	}
	if r.Until != nil {
		spec.Until = r.Until.Until
	}
	session := r.SessionID
	if session == "" {
		session = callerSession
	}
	if session == "" {
		return Spec{}, Errorf(CodeNoCallerIdentity, "no sessionId given and the caller has no session identity; pass sessionId")
	}
	urgency := r.Urgency
	if urgency == "" {
		urgency = UrgencyNextTurn
	}
	spec.Target = Target{Kind: TargetSession, SessionID: session, Urgency: urgency}
	spec.Provider = r.Provider
	spec.Group = r.Group
	spec.Label = r.Label
	if r.MuteSelf != nil {
		spec.MuteSelf = *r.MuteSelf
	}
	spec.BatchMs = r.BatchMs
	if r.Key != "" {
		if !ValidWatchKey(r.Key) {
			return Spec{}, Errorf(CodeInvalidInput, "key %q must be 1 to %d characters of letters, digits and . _ : / # -", r.Key, MaxKeyLen)
		}
		spec.Key = r.Key
	}
	if err := spec.Validate(); err != nil {
		return Spec{}, err
	}
	return spec, nil
}
