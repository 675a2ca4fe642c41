package deliver

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/runtime/inbox"
	"github.com/agentproto/sentinel/runtime/journal"
	"github.com/agentproto/sentinel/runtime/metrics"
	"github.com/agentproto/sentinel/runtime/sentinels"
)

// Send stores one prepared message at its target, idempotently: a second
// call for the same event reports Duplicate and stores nothing. It never
// retargets; a target that rejects the delivery may park the event and
// report Orphaned. It must not read the record it was prepared from (the
// pipeline writes that record meanwhile).
type Send func(ctx context.Context) (Outcome, error)

// Planner is a Router that can tell, before storing anything or running a
// hook, that a matched event goes to its sentinel's own target as it is:
// a live (or unregistered) session's inbox, or a subscription's feed. The
// pipeline then writes the target's message and the record beside each
// other, saving one durable write's wait per event (the direct path).
type Planner interface {
	Router
	// Plan returns the Send that stores ev's message at rec's target when
	// rec's events go there as they are, with no resume, successor,
	// forward or park to decide; nil when the event must take Route. It
	// stores nothing and runs no hook. A message that can never be stored
	// (Permanent) is an error here, before anything is written.
	Plan(ctx context.Context, rec *sentinel.Sentinel, ev *sentinel.Event) (Send, error)
	// Prepare returns the Send that stores ev's message at rec's target as
	// it is, without asking whether the target is alive: the write a
	// redelivery completes (confirm).
	Prepare(rec *sentinel.Sentinel, ev *sentinel.Event) (Send, error)
}

// delivered is what a Send beside the record write returned.
type delivered struct {
	out Outcome
	err error
}

// deliverDirect writes the event's message (a Planner's Send) and the
// record beside each other. The record cannot wait for the message
// here, so it marks the event Unconfirmed: when the message write fails
// (or the node dies) after the record write landed, the event is not
// acked, and its next delivery finds the mark and writes the message again
// (confirm) instead of trusting the seen mark and the status the record
// already carries. A failed record write leaves the record as it was: the
// redelivery takes the whole path again, and the message write is
// idempotent.
func (p *Pipeline) deliverDirect(ctx context.Context, send Send, rec *sentinel.Sentinel, rev uint64, ev *sentinel.Event, closure closureAction, now time.Time) (Result, error) {
	if err := p.beforeSend(ctx, ev); err != nil {
		return "", err
	}
	done := make(chan delivered, 1)
	go func() {
		start := time.Now()
		out, err := send(ctx)
		p.metrics.StepSince(metrics.StepInbox, start)
		done <- delivered{out, err}
	}()
	sctx, cancel := settleContext(ctx)
	defer cancel()
	w, werr := p.writeRecord(sctx, rec, rev, ev, Outcome{}, closure, now, true)
	d := <-done
	if d.err != nil {
		return "", fmt.Errorf("deliver %s to %s: %w", ev.ID, rec.ID, d.err)
	}
	if werr != nil {
		return "", werr
	}
	if d.out.Orphaned && !w.gone && !w.elsewhere {
		if err := p.orphan(sctx, rec.ID); err != nil {
			return "", err
		}
	}
	return p.finish(sctx, rec, ev, d.out, w), nil
}

// orphan marks a sentinel orphaned after its target rejected a delivery
// the direct path had already written the record for (as delivered).
func (p *Pipeline) orphan(ctx context.Context, id string) error {
	_, err := p.store.Update(ctx, id, func(r *sentinel.Sentinel) error {
		if !r.Status.Pollable() || r.Status == sentinel.StatusOrphaned {
			return sentinels.ErrSkip
		}
		r.Status = sentinel.StatusOrphaned
		return nil
	})
	if err != nil && !errors.Is(err, sentinels.ErrNotFound) {
		return fmt.Errorf("orphan %s: %w", id, err)
	}
	return nil
}

// confirmWindow bounds how long after an event was handled its record's
// Unconfirmed mark is trusted to mean "write the message again": a
// redelivery comes within the ack wait and a restart, and a copy of the
// event sent much later must not write a message its target's inbox
// already aged out.
const confirmWindow = 24 * time.Hour

// withinConfirmWindow reports whether rec's last handled event is recent
// enough for its Unconfirmed mark to be acted on.
func (p *Pipeline) withinConfirmWindow(rec *sentinel.Sentinel) bool {
	return p.now().UnixMilli()-rec.LastEventTs < confirmWindow.Milliseconds()
}

// confirm completes the delivery of an event its record holds
// Unconfirmed: the event again after the record was written beside a
// message write that failed or was cut short (a redelivery, or the same
// message after a restart whose consumer had not stored its delivery). The
// message is written again (idempotent: if the first write landed it is a
// duplicate); the record already holds everything else of the event.
func (p *Pipeline) confirm(ctx context.Context, pl Planner, rec *sentinel.Sentinel, ev *sentinel.Event) (Result, error) {
	send, err := pl.Prepare(rec, ev)
	if err != nil {
		return "", fmt.Errorf("deliver %s to %s again: %w", ev.ID, rec.ID, err)
	}
	send = p.batched(rec, ev, send)
	if err := p.beforeSend(ctx, ev); err != nil {
		return "", err
	}
	start := time.Now()
	out, err := send(ctx)
	p.metrics.StepSince(metrics.StepInbox, start)
	if err != nil {
		return "", fmt.Errorf("deliver %s to %s again: %w", ev.ID, rec.ID, err)
	}
	if out.Orphaned {
		if err := p.orphan(ctx, rec.ID); err != nil {
			return "", err
		}
		p.noteOutcome(rec, ev, out)
		p.metrics.IncVec(func(m *metrics.Metrics) prometheusCounterVec { return m.Parked }, "dead_target")
		return ResultParked, nil
	}
	if out.Merged {
		p.noteOutcome(rec, ev, out)
		return ResultMerged, nil
	}
	if out.Duplicate {
		p.metrics.Inc(func(m *metrics.Metrics) prometheusCounter { return m.SeenDuplicates })
		p.note(rec.ID, rec, ev, journal.Duplicate, "already handled (in the seen window, and its message is at the target)", nil)
		return ResultDuplicate, nil
	}
	p.metrics.Inc(func(m *metrics.Metrics) prometheusCounter { return m.Delivered })
	p.noteOutcome(rec, ev, out)
	return ResultDelivered, nil
}

// Plan implements Planner: a node without a session registry always
// delivers to the target's inbox as it is.
func (d DirectRouter) Plan(_ context.Context, rec *sentinel.Sentinel, ev *sentinel.Event) (Send, error) {
	return d.Prepare(rec, ev)
}

// Prepare implements Planner.
func (d DirectRouter) Prepare(rec *sentinel.Sentinel, ev *sentinel.Event) (Send, error) {
	t := rec.Spec.Target
	msg := inbox.SentinelMessage(rec.ID, rec.Provider, t.SessionID, t.Urgency, ev, sentinel.FormatTime(d.now()))
	if err := inbox.Validate(&msg); err != nil {
		return nil, err
	}
	return func(ctx context.Context) (Outcome, error) {
		ea, err := d.inbox.AppendEvent(ctx, d.inbox.Append, msg, ev.ID)
		if err != nil {
			return Outcome{}, err
		}
		return EventOutcome(ea), nil
	}, nil
}

var _ Planner = DirectRouter{}
