package sentinel

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
)

// Status of a sentinel record.
type Status string

// Statuses. active and orphaned form the pollable set.
const (
	StatusActive   Status = "active"
	StatusPaused   Status = "paused"
	StatusExpired  Status = "expired"
	StatusOrphaned Status = "orphaned"
	StatusError    Status = "error"
)

// Pollable reports whether the status is in the pollable set (active,
// orphaned).
func (s Status) Pollable() bool { return s == StatusActive || s == StatusOrphaned }

// Handle is the opaque provider state of a sentinel. Only the provider reads
// it; the runtime persists Cursor after a fully handled poll batch and State
// at create and attach. It never leaves the daemon.
type Handle struct {
	Provider string         `json:"provider"`
	RemoteID string         `json:"remoteId,omitempty"`
	Cursor   string         `json:"cursor,omitempty"`
	State    map[string]any `json:"state,omitempty"`
}

// StateString returns State[key] when it is a string.
func (h Handle) StateString(key string) string {
	s, _ := h.State[key].(string)
	return s
}

// MaxClosedSubjects caps the closedSubjects list (oldest evicted).
const MaxClosedSubjects = 500

// Sentinel is the persisted record of one watch.
type Sentinel struct {
	ID               string   `json:"id"`
	Spec             Spec     `json:"spec"`
	Provider         string   `json:"provider"`
	Handle           Handle   `json:"handle"`
	Status           Status   `json:"status"`
	CreatedTs        int64    `json:"createdTs"`
	LastEventTs      int64    `json:"lastEventTs,omitempty"`
	EventCount       int      `json:"eventCount"`
	LastError        string   `json:"lastError,omitempty"`
	TerminalSubjects []string `json:"terminalSubjects,omitempty"`
	ClosedSubjects   []string `json:"closedSubjects"`
	// SeenMarks counts ids marked seen; the seen window is pruned as it grows.
	SeenMarks int `json:"seenMarks,omitempty"`
	// Seen holds the digests of the last MaxRecentSeen handled event ids,
	// concatenated (base64 in JSON), written atomically with the counters;
	// the long window lives in the seen bucket. It never leaves the daemon.
	Seen []byte `json:"seen,omitempty"`
	// LastHandledID is the id of the last event whose counters were applied,
	// so a redelivery after a crash does not count the event twice.
	LastHandledID string `json:"lastHandledId,omitempty"`
	// Unconfirmed is the id of the last handled event when its inbox
	// message was written beside this record (the delivery pipeline's
	// direct path): the record was stored not knowing whether that write
	// landed, so a redelivery of the event writes the message again
	// (idempotently) instead of trusting the seen mark. The next handled
	// event's write clears it.
	Unconfirmed string `json:"unconfirmed,omitempty"`
	// Warnings say why the sentinel may never deliver (its provider was
	// not ready when it was created, a webhook hook could not be made, the
	// repository was not reachable): shown in its view and the dashboard.
	Warnings []Warning `json:"warnings,omitempty"`
}

// Warning codes.
const (
	// WarnProviderNotReady: the auto-selected provider is not ready (for
	// local-gh: gh is not signed in); nothing comes until it is.
	WarnProviderNotReady = "provider_not_ready"
	// WarnHookNotCreated: the provider could not create its webhook hook.
	WarnHookNotCreated = "hook_not_created"
	// WarnRepoUnreachable: the repository is not reachable with the
	// provider's credentials.
	WarnRepoUnreachable = "repo_unreachable"
)

// Warning is one reason a sentinel may deliver nothing, with what fixes it.
type Warning struct {
	Code     string `json:"code"`
	Provider string `json:"provider,omitempty"`
	Message  string `json:"message"`
	Fix      string `json:"fix,omitempty"`
}

// View is the public projection of a sentinel: what sentinel_list, the HTTP
// routes and tool results return. It never carries the handle, the seen
// window, terminalSubjects, closedSubjects or any credential.
type View struct {
	ID          string   `json:"id"`
	Provider    string   `json:"provider"`
	Status      Status   `json:"status"`
	Match       []Clause `json:"match"`
	Until       Until    `json:"until"`
	Target      Target   `json:"target"`
	Group       string   `json:"group,omitempty"`
	Label       string   `json:"label,omitempty"`
	CreatedTs   int64    `json:"createdTs"`
	EventCount  int      `json:"eventCount"`
	LastEventTs int64    `json:"lastEventTs,omitempty"`
	LastError   string   `json:"lastError,omitempty"`
	MuteSelf    bool     `json:"muteSelf"`
	Key         string   `json:"key,omitempty"`
	// BatchMs is the digest window (Spec.BatchMs), 0 for none.
	BatchMs int `json:"batchMs,omitempty"`
	// Warnings: why the sentinel may deliver nothing (Sentinel.Warnings).
	Warnings []Warning `json:"warnings,omitempty"`
	// Existing and Updated are set on a watch's answer only: an equal
	// active sentinel (or the one with the watch's key and the same spec)
	// was returned instead of a new one; the key's sentinel was updated.
	Existing bool `json:"existing,omitempty"`
	Updated  bool `json:"updated,omitempty"`
}

// View projects the record.
func (s *Sentinel) View() View {
	t := s.Spec.Target
	switch t.Kind {
	case TargetWebhook:
		t = Target{Kind: TargetWebhook}
	case TargetMCPEvents:
		t = Target{Kind: TargetMCPEvents, Mode: t.Mode, SubscriptionID: t.SubscriptionID}
	}
	return View{
		ID:          s.ID,
		Provider:    s.Provider,
		Status:      s.Status,
		Match:       s.Spec.Match,
		Until:       s.Spec.Until,
		Target:      t,
		Group:       s.Spec.Group,
		Label:       s.Spec.Label,
		CreatedTs:   s.CreatedTs,
		EventCount:  s.EventCount,
		LastEventTs: s.LastEventTs,
		LastError:   s.LastError,
		MuteSelf:    s.Spec.MuteSelf,
		Key:         s.Spec.Key,
		BatchMs:     s.Spec.BatchMs,
		Warnings:    s.Warnings,
	}
}

// IsClosed reports whether subject is in closedSubjects.
func (s *Sentinel) IsClosed(subject string) bool {
	for _, c := range s.ClosedSubjects {
		if c == subject {
			return true
		}
	}
	return false
}

// MarkClosed adds subject to closedSubjects, evicting the oldest past the cap.
func (s *Sentinel) MarkClosed(subject string) {
	if s.IsClosed(subject) {
		return
	}
	s.ClosedSubjects = append(s.ClosedSubjects, subject)
	if n := len(s.ClosedSubjects) - MaxClosedSubjects; n > 0 {
		s.ClosedSubjects = append([]string(nil), s.ClosedSubjects[n:]...)
	}
}

// Reopen removes subject from closedSubjects.
func (s *Sentinel) Reopen(subject string) {
	out := s.ClosedSubjects[:0]
	for _, c := range s.ClosedSubjects {
		if c != subject {
			out = append(out, c)
		}
	}
	s.ClosedSubjects = out
}

// AddTerminal unions clause subjects into terminalSubjects and reports
// whether every clause subject has now seen a terminal event.
func (s *Sentinel) AddTerminal(clauseSubjects []string) bool {
	have := map[string]bool{}
	for _, t := range s.TerminalSubjects {
		have[t] = true
	}
	for _, c := range clauseSubjects {
		if !have[c] {
			have[c] = true
			s.TerminalSubjects = append(s.TerminalSubjects, c)
		}
	}
	for _, c := range s.Spec.ClauseSubjects() {
		if !have[c] {
			return false
		}
	}
	return true
}

// MaxRecentSeen caps the in-record seen ring.
const MaxRecentSeen = 1000

// seenDigestLen is the length of one digest in the ring (80 bits of
// SHA-256: collisions within one sentinel's window are negligible).
const seenDigestLen = 10

func seenDigest(eventID string) []byte {
	sum := sha256.Sum256([]byte(eventID))
	return sum[:seenDigestLen]
}

// SeenDigest is the hex digest of an event id, as kept in the long window.
func SeenDigest(eventID string) string { return hex.EncodeToString(seenDigest(eventID)) }

// HasSeen reports whether the event id is in the ring.
func (s *Sentinel) HasSeen(eventID string) bool {
	d := seenDigest(eventID)
	for i := len(s.Seen) - seenDigestLen; i >= 0; i -= seenDigestLen {
		if bytes.Equal(s.Seen[i:i+seenDigestLen], d) {
			return true
		}
	}
	return false
}

// SeenLen returns how many ids the ring holds.
func (s *Sentinel) SeenLen() int { return len(s.Seen) / seenDigestLen }

// AddSeen appends the event id to the ring and returns the hex digests
// evicted past the cap (the caller moves them to the long window).
func (s *Sentinel) AddSeen(eventID string) (evicted []string) {
	if s.HasSeen(eventID) {
		return nil
	}
	s.Seen = append(s.Seen, seenDigest(eventID)...)
	for s.SeenLen() > MaxRecentSeen {
		evicted = append(evicted, hex.EncodeToString(s.Seen[:seenDigestLen]))
		s.Seen = append([]byte(nil), s.Seen[seenDigestLen:]...)
	}
	return evicted
}

// ExpiredAt reports whether an until.at sentinel is past its time at nowMs.
func (s *Sentinel) ExpiredAt(nowMs int64) bool {
	return s.Spec.Until.Kind == UntilAt && nowMs >= s.Spec.Until.Ms
}
