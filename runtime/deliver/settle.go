package deliver

import (
	"context"
	"errors"
	"time"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/runtime/metrics"
	"github.com/agentproto/sentinel/runtime/sentinels"
)

// written is what writeRecord did.
type written struct {
	updated *sentinel.Sentinel
	// expired: this event met the sentinel's until condition.
	expired bool
	// elsewhere: the record already held the event when it was written
	// again after a conflict: another handler of its redelivery stored it.
	elsewhere bool
	// gone: the sentinel was removed meanwhile.
	gone bool
}

// writeRecord marks the event seen (the in-record ring), applies its
// counters, the routing outcome (target, status), the closure and the until
// condition: one atomic write, compare-and-set on rev, re-decided on the
// record as it is when it changed since it was read. unconfirmed records
// that the event's inbox message is being written beside this write
// (Sentinel.Unconfirmed).
func (p *Pipeline) writeRecord(ctx context.Context, rec *sentinel.Sentinel, rev uint64, ev *sentinel.Event, out Outcome, closure closureAction, now time.Time, unconfirmed bool) (written, error) {
	start := time.Now()
	defer p.metrics.StepSince(metrics.StepRecordWrite, start)
	var w written
	first := true
	updated, err := p.store.UpdateFrom(ctx, rec.ID, rec, rev, func(r *sentinel.Sentinel) error {
		w.expired = false
		if !first && ringHolds(r, ev) {
			// Fenced: the record changed since it was read and already holds
			// this event: another node (this event's redelivery, after this
			// node paused past the ack wait) handled it. Its write stands.
			w.elsewhere = true
			return sentinels.ErrSkip
		}
		if !first {
			// Re-decide on the record as it is now, not as it was read.
			if closure = closureFor(r, ev); closure == closurePostMortem {
				closure = closureNone
			}
		}
		first = false
		applyClosure(r, closure, ev.Subject)
		if err := p.addSeen(ctx, rec.ID, r, ev); err != nil {
			return err
		}
		if r.LastHandledID != ev.ID {
			r.EventCount++
			r.LastEventTs = now.UnixMilli()
			r.LastHandledID = ev.ID
		}
		r.Unconfirmed = ""
		if unconfirmed {
			r.Unconfirmed = ev.ID
		}
		if out.RetargetTo != "" && r.Spec.Target.Kind == sentinel.TargetSession {
			r.Spec.Target.SessionID = out.RetargetTo
		}
		switch {
		case out.Orphaned && r.Status.Pollable():
			r.Status = sentinel.StatusOrphaned
		case !out.Parked && r.Status == sentinel.StatusOrphaned:
			r.Status = sentinel.StatusActive
		}
		switch r.Spec.Until.Kind {
		case sentinel.UntilSubjectTerminal:
			if ev.Terminal && r.AddTerminal(r.Spec.TerminalClauseSubjects(ev)) {
				w.expired = true
			}
		case sentinel.UntilCount:
			w.expired = r.EventCount >= r.Spec.Until.N
		case sentinel.UntilAt:
			w.expired = now.UnixMilli() >= r.Spec.Until.Ms
		}
		if w.expired && r.Status.Pollable() {
			r.Status = sentinel.StatusExpired
		}
		return nil
	})
	if errors.Is(err, sentinels.ErrNotFound) {
		return written{gone: true}, nil
	}
	if err != nil {
		return written{}, err
	}
	w.updated = updated
	return w, nil
}

// finish journals and counts a routed event whose record was written, and
// cancels the provider of a sentinel the event expired.
func (p *Pipeline) finish(ctx context.Context, rec *sentinel.Sentinel, ev *sentinel.Event, out Outcome, w written) Result {
	switch {
	case w.gone:
		// Removed while delivering: the message is already stored.
		p.noteOutcome(rec, ev, out)
		return ResultDelivered
	case w.elsewhere:
		return p.handledElsewhere(ctx, rec, ev)
	}
	p.noteOutcome(rec, ev, out)
	if w.expired {
		p.metrics.Inc(func(m *metrics.Metrics) prometheusCounter { return m.Expired })
		p.expirer.CancelProvider(ctx, w.updated)
	}
	switch {
	case out.Parked:
		p.metrics.IncVec(func(m *metrics.Metrics) prometheusCounterVec { return m.Parked }, "dead_target")
		return ResultParked
	case out.Duplicate:
		p.metrics.Inc(func(m *metrics.Metrics) prometheusCounter { return m.InboxDuplicates })
		return ResultDuplicate
	case out.Merged:
		return ResultMerged
	}
	p.metrics.Inc(func(m *metrics.Metrics) prometheusCounter { return m.Delivered })
	return ResultDelivered
}

// markSeen records a handled-but-not-delivered event in the record's ring
// with its closure decision (filtered, muted, post-mortem, given up),
// moving what the ring evicts to the long window first. Its
// compare-and-set is fenced as writeRecord's is: when the record changed
// since it was read and already holds the event, another handler (this
// event's redelivery, after this node paused past the ack wait) stored its
// decision, and this one writes nothing (elsewhere: the event is the
// other's to settle); else the closure is decided again on the record as
// it is now (a later event may have reopened or closed the subject), not
// applied as read. Before this fence a stale handler re-applied the
// closure it had decided on the old record (issue 21, item 2).
func (p *Pipeline) markSeen(ctx context.Context, rec *sentinel.Sentinel, rev uint64, ev *sentinel.Event, closure closureAction) (elsewhere bool, err error) {
	first := true
	_, err = p.store.UpdateFrom(ctx, rec.ID, rec, rev, func(r *sentinel.Sentinel) error {
		if !first {
			if ringHolds(r, ev) {
				elsewhere = true
				return sentinels.ErrSkip
			}
			closure = closureOnFresh(r, ev, closure)
		}
		first = false
		applyClosure(r, closure, ev.Subject)
		return p.addSeen(ctx, rec.ID, r, ev)
	})
	if err != nil && !errors.Is(err, sentinels.ErrNotFound) {
		return false, err
	}
	return elsewhere, nil
}

// closureOnFresh decides an event's closure again on a record that changed
// since the first decision: a handler that decided none (a given-up
// event) keeps none; a post-mortem decision on a subject reopened meanwhile
// has nothing left to apply.
func closureOnFresh(r *sentinel.Sentinel, ev *sentinel.Event, was closureAction) closureAction {
	if was == closureNone {
		return closureNone
	}
	if c := closureFor(r, ev); c != closurePostMortem {
		return c
	}
	return closureNone
}
