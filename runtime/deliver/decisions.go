package deliver

import (
	"fmt"
	"time"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/runtime/journal"
)

// DecisionRecorder records the pipeline's decisions (runtime/journal's
// Writer, into the decision journal). Record is called on the delivery
// path once per decision: it must return at once and never fail the
// delivery (the writer queues and drops under overload). A nil Decisions
// on the Pipeline records nothing.
type DecisionRecorder interface {
	Record(e sentinel.Decision)
}

// note journals one decision about ev for a sentinel; rec may be nil (a
// sentinel that is gone). with, when set, adds decision details.
func (p *Pipeline) note(sentinelID string, rec *sentinel.Sentinel, ev *sentinel.Event, decision, reason string, with func(*sentinel.Decision)) {
	if p.decisions == nil {
		return
	}
	e := journal.FromEvent(sentinelID, ev, decision, reason)
	e.Ts = sentinel.FormatTime(p.now())
	if rec != nil {
		e.Provider = rec.Provider
	}
	if with != nil {
		with(&e)
	}
	p.decisions.Record(e)
}

// noteFiltered journals a filtered event with the clauses that failed.
func (p *Pipeline) noteFiltered(rec *sentinel.Sentinel, ev *sentinel.Event, defaults sentinel.DefaultTypesFunc) {
	if p.decisions == nil {
		return
	}
	misses := rec.Spec.Misses(ev, defaults)
	p.note(rec.ID, rec, ev, journal.Filtered, journal.FilteredReason(misses, ev.Type), func(e *sentinel.Decision) { e.Clauses = misses })
}

// noteOutcome journals what routing a matched event produced: parked or
// forwarded for a dead target, already in the inbox, or delivered.
func (p *Pipeline) noteOutcome(rec *sentinel.Sentinel, ev *sentinel.Event, out Outcome) {
	if p.decisions == nil {
		return
	}
	target := rec.Spec.Target.SessionID
	where := func(e *sentinel.Decision) {
		if out.Message != nil {
			e.Session, e.MessageID = out.Message.To, out.Message.ID
		}
	}
	switch {
	case out.Parked:
		p.note(rec.ID, rec, ev, journal.DeadTarget, "parked: "+out.Reason, nil)
	case out.Held && out.Duplicate:
		p.note(rec.ID, rec, ev, journal.Duplicate, "already held for (or shown in) the digest of "+ev.Subject, nil)
	case out.Held:
		p.note(rec.ID, rec, ev, journal.Delivered, fmt.Sprintf("held for the digest of %s (batchMs %d): shown when the window ends", ev.Subject, rec.Spec.BatchMs), nil)
	case out.Duplicate:
		p.note(rec.ID, rec, ev, journal.Duplicate, "the inbox already held this message", where)
	case out.Merged:
		p.note(rec.ID, rec, ev, journal.Merged, fmt.Sprintf("another sentinel of session %s already showed this event (message %s) at the same or a higher urgency: merged, not shown again", target, out.MergedInto), where)
	case out.Escalated:
		p.note(rec.ID, rec, ev, journal.Delivered, fmt.Sprintf("another sentinel already showed this event (message %s) at a lower urgency: shown again at %s", out.MergedInto, rec.Spec.Target.Urgency), where)
	case out.Message != nil && out.RetargetTo == "" && out.Message.To != target:
		p.note(rec.ID, rec, ev, journal.DeadTarget, fmt.Sprintf("target session %s is closed: forwarded to its parent %s", target, out.Message.To), where)
	case out.RetargetTo != "":
		p.note(rec.ID, rec, ev, journal.Delivered, fmt.Sprintf("delivered to %s, the live successor of %s", out.RetargetTo, target), where)
	default:
		p.note(rec.ID, rec, ev, journal.Delivered, "", where)
	}
}

// noteRetry journals a failed delivery that will be retried.
func (p *Pipeline) noteRetry(sentinelID string, ev *sentinel.Event, cause error, attempt uint64, delay time.Duration) {
	p.note(sentinelID, nil, ev, journal.Retrying, fmt.Sprintf("%v (retry in %s)", cause, delay), func(e *sentinel.Decision) { e.Attempt = int(attempt) })
}
