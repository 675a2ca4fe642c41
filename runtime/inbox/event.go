package inbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus"
)

// EventMessageID is the id of the message that shows one event in one
// session's inbox: at most one per (session, event id), whichever of the
// session's sentinels matched the event first. escalation names the
// urgency of a later, more urgent match's message ("" for the first).
func EventMessageID(sessionID, eventID string, escalation sentinel.Urgency) string {
	if escalation == "" {
		return DeterministicID("sentinel-event", sessionID, eventID)
	}
	return DeterministicID("sentinel-event", sessionID, eventID, string(escalation))
}

// AppendFunc stores a message in an inbox (Inbox.Append, or a service
// over it) and returns the stored message and whether it was there already.
type AppendFunc func(ctx context.Context, msg sentinel.Message) (sentinel.Message, bool, error)

// EventAppend is what AppendEvent did.
type EventAppend struct {
	// Stored is the message that shows the event: the one just written,
	// or the one already there.
	Stored sentinel.Message
	// Duplicate: this sentinel's own message for the event was already
	// stored (a redelivery): nothing new.
	Duplicate bool
	// Merged: another sentinel of the session had already shown the event
	// at the same or a higher urgency: nothing new was stored, and the
	// session is not woken again.
	Merged bool
	// Escalated: another sentinel had shown the event at a lower urgency;
	// a second message at this sentinel's urgency was stored (Stored), so
	// a fyi watch never swallows an interrupt.
	Escalated bool
	// MergedInto is the id of the message the event was merged into or
	// escalated from.
	MergedInto string
}

// AppendEvent stores msg, a sentinel's message for event eventID
// (SentinelMessage: its id is EventMessageID(msg.To, eventID, "") and its
// Origin the sentinel), at most once per (session, event id). The
// inbox's one subject per message (expected last sequence 0) makes the
// first write win on every node and through every redelivery; a later
// write finds the message there and:
//   - when it was this sentinel's (Origin): Duplicate, as before;
//   - when another sentinel's at the same or a higher urgency (or an
//     escalation at a higher urgency than msg's exists): Merged;
//   - else it stores the escalation message EventMessageID(to, event,
//     msg.Urgency), idempotent in the same way: Escalated, or Duplicate /
//     Merged when that one is there already.
//
// Two escalations to different urgencies written at the same instant on
// two nodes may both land (at most one per urgency); everything else
// holds one message per (session, event, urgency) at most, and one per
// (session, event) unless a more urgent sentinel matched after a less
// urgent one.
func (i *Inbox) AppendEvent(ctx context.Context, add AppendFunc, msg sentinel.Message, eventID string) (EventAppend, error) {
	stored, dup, err := add(ctx, msg)
	if err != nil {
		return EventAppend{}, err
	}
	if !dup {
		return EventAppend{Stored: stored}, nil
	}
	if stored.Origin == "" || stored.Origin == msg.Origin {
		return EventAppend{Stored: stored, Duplicate: true}, nil
	}
	first := stored
	if msg.Urgency.Rank() <= first.Urgency.Rank() {
		return EventAppend{Stored: first, Merged: true, MergedInto: first.ID}, nil
	}
	for _, u := range sentinel.Urgencies[msg.Urgency.Rank()+1:] {
		if u.Rank() <= first.Urgency.Rank() {
			continue
		}
		higher, ok, err := i.Lookup(ctx, msg.To, EventMessageID(msg.To, eventID, u))
		if err != nil {
			return EventAppend{}, err
		}
		if ok {
			return EventAppend{Stored: higher, Merged: true, MergedInto: higher.ID}, nil
		}
	}
	esc := msg
	esc.ID = EventMessageID(msg.To, eventID, msg.Urgency)
	stored, dup, err = add(ctx, esc)
	if err != nil {
		return EventAppend{}, err
	}
	switch {
	case !dup:
		return EventAppend{Stored: stored, Escalated: true, MergedInto: first.ID}, nil
	case stored.Origin == "" || stored.Origin == msg.Origin:
		return EventAppend{Stored: stored, Duplicate: true}, nil
	}
	return EventAppend{Stored: stored, Merged: true, MergedInto: stored.ID}, nil
}

// Lookup returns the message msgID of a session's inbox, if it is there.
func (i *Inbox) Lookup(ctx context.Context, sessionID, msgID string) (sentinel.Message, bool, error) {
	raw, err := i.s.GetLastMsgForSubject(ctx, Subject(sessionID, msgID))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return sentinel.Message{}, false, nil
	}
	if err != nil {
		return sentinel.Message{}, false, fmt.Errorf("inbox lookup %s: %w", msgID, bus.Retryable(err))
	}
	var m sentinel.Message
	if err := json.Unmarshal(raw.Data, &m); err != nil {
		return sentinel.Message{}, false, fmt.Errorf("inbox lookup %s: %w", msgID, err)
	}
	m.Seq = raw.Sequence
	return m, true, nil
}
