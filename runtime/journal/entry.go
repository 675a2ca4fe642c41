package journal

import (
	"fmt"
	"strings"

	"github.com/agentproto/sentinel"
)

// Decisions the pipeline journals.
const (
	// Delivered: stored in an inbox (MessageID, Session).
	Delivered = "delivered"
	// Filtered: no clause matched (Clauses says which failed and how).
	Filtered = "filtered"
	// Duplicate: already handled (the seen window, another node, or the
	// inbox already held the message).
	Duplicate = "duplicate"
	// Merged: another sentinel of the same session had already shown the
	// event (MessageID): one message per session and event; the sentinel
	// counted it.
	Merged = "merged"
	// PostMortem: a non-terminal event on a closed subject, parked.
	PostMortem = "post-mortem"
	// DeadTarget: the target session is dead; the event was parked or
	// forwarded to its parent (Reason says which).
	DeadTarget = "dead-target"
	// Retrying: the delivery failed and will be retried (Reason holds the
	// error).
	Retrying = "retrying"
	// Undeliverable: a permanent failure or the last attempt failed; parked.
	Undeliverable = "undeliverable"
	// Self: caused by the provider's own identity and muted (muteSelf).
	Self = "self"
	// Stopped: the sentinel is gone or not pollable; nothing delivered.
	Stopped = "stopped"
	// Expired: the sentinel's until.at had passed; it expired.
	Expired = "expired"
	// Replayed: a parked event re-run on request (Reason says the outcome).
	Replayed = "replayed"
)

// Clip limits of the third-party text an entry keeps.
const (
	maxSummary = 1024
	maxReason  = 2048
	maxField   = 512
)

// FromEvent starts an entry for a decision about ev by a sentinel, with
// the event's identity and clipped summary.
func FromEvent(sentinelID string, ev *sentinel.Event, decision, reason string) sentinel.Decision {
	e := sentinel.Decision{SentinelID: sentinelID, Decision: decision, Reason: clip(reason, maxReason)}
	if ev != nil {
		e.EventID = ev.ID
		e.Subject = clip(ev.Subject, maxField)
		e.Type = clip(ev.Type, maxField)
		e.Time = clip(ev.Time, 64)
		e.Summary = clip(ev.Summary, maxSummary)
		e.Source = clip(ev.Source, maxField)
		e.Terminal = ev.Terminal
		e.SelfCaused = ev.SelfCaused
		if len(ev.Subjects) > 0 && len(ev.Subjects) <= 16 {
			e.Subjects = append([]string(nil), ev.Subjects...)
		}
	}
	return e
}

// FilteredReason renders the clause misses of a filtered event.
func FilteredReason(misses []sentinel.ClauseMiss, eventType string) string {
	parts := make([]string, 0, len(misses))
	for _, m := range misses {
		if m.Failed == sentinel.MissType {
			parts = append(parts, fmt.Sprintf("clause %d (%s): type %s not in [%s]", m.Clause, m.Subject, eventType, strings.Join(m.Types, ",")))
		} else {
			parts = append(parts, fmt.Sprintf("clause %d (%s): subject does not match", m.Clause, m.Subject))
		}
	}
	if len(parts) == 0 {
		return "no clause matched"
	}
	return "no clause matched: " + strings.Join(parts, "; ")
}

// clip shortens s to at most n bytes on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && !isRuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
