package deliver

import (
	"context"
	"time"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/runtime/inbox"
)

// Outcome is what routing one matched event produced. Parking and
// orphaning count as handled.
type Outcome struct {
	// Duplicate: the target inbox already held this message (a redelivery
	// after a crash); counters are not applied twice.
	Duplicate bool
	// Parked: the event was journaled instead of delivered, with Reason.
	Parked bool
	Reason string
	// Orphaned marks the sentinel orphaned (its target is dead).
	Orphaned bool
	// RetargetTo re-targets the sentinel to a resumed session's new id.
	RetargetTo string
	// Message is the stored inbox message, when one was stored.
	Message *sentinel.Message
	// Merged: another sentinel of the target session had already shown
	// this event (one message per session and event, inbox.AppendEvent):
	// nothing new was stored; the sentinel still counts the event.
	// MergedInto names that message.
	Merged     bool
	MergedInto string
	// Escalated: another sentinel had shown the event at a lower urgency,
	// and a second message at this sentinel's urgency woke the session.
	Escalated bool
	// Held: the event joined its subject's digest window (a sentinel's
	// batchMs, batch.go); the digest shows it when the window ends.
	Held bool
}

// EventOutcome is the Outcome of an inbox.AppendEvent.
func EventOutcome(ea inbox.EventAppend) Outcome {
	stored := ea.Stored
	return Outcome{Duplicate: ea.Duplicate, Merged: ea.Merged, Escalated: ea.Escalated, MergedInto: ea.MergedInto, Message: &stored}
}

// Router delivers one matched event of a sentinel to its target. The
// sessions package implements dead-target routing (resume, successor,
// parent forward, park); an error leaves the event unhandled and retryable.
type Router interface {
	Route(ctx context.Context, rec *sentinel.Sentinel, ev *sentinel.Event) (Outcome, error)
}

// DirectRouter stores the event's message in the target's inbox with no
// liveness check: the router of a node without a session registry.
type DirectRouter struct {
	inbox *inbox.Inbox
	now   func() time.Time
}

// DirectRouterOption sets one of a direct router's optional settings.
type DirectRouterOption func(*DirectRouter)

// WithDirectRouterClock stamps messages with now (default time.Now).
func WithDirectRouterClock(now func() time.Time) DirectRouterOption {
	return func(d *DirectRouter) { d.now = now }
}

// NewDirectRouter returns the router storing messages in ib.
func NewDirectRouter(ib *inbox.Inbox, opts ...DirectRouterOption) DirectRouter {
	d := DirectRouter{inbox: ib, now: time.Now}
	for _, o := range opts {
		o(&d)
	}
	return d
}

// Route implements Router.
func (d DirectRouter) Route(ctx context.Context, rec *sentinel.Sentinel, ev *sentinel.Event) (Outcome, error) {
	send, err := d.Prepare(rec, ev)
	if err != nil {
		return Outcome{}, err
	}
	return send(ctx)
}
