package deliver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/runtime/journal"
	"github.com/agentproto/sentinel/runtime/metrics"
	"github.com/agentproto/sentinel/runtime/park"
	"github.com/agentproto/sentinel/runtime/sentinels"
)

// Result names what the pipeline did with one event.
type Result string

// Results.
const (
	ResultDelivered Result = "delivered"
	ResultDuplicate Result = "duplicate"
	ResultFiltered  Result = "filtered"
	ResultParked    Result = "parked"
	ResultStopped   Result = "stopped"
	ResultExpired   Result = "expired"
	// ResultMuted: the loop shield (muteSelf) kept a self-caused event.
	ResultMuted Result = "muted"
)

// Pipeline is the per-event pipeline shared by polled and pushed events.
type Pipeline struct {
	Store    *sentinels.Store
	Seen     *sentinels.Seen
	Registry *providers.Registry
	Router   Router
	Park     *park.Journal
	Metrics  *metrics.Metrics
	Log      *slog.Logger
	Now      func() time.Time
	// Expirer cancels the provider of an expired sentinel, best effort.
	Expirer *sentinels.Expirer
	// Journal records every decision (journal.go); nil records nothing.
	Journal Journal
}

// Handle runs the pipeline for the first delivery of one event of one
// sentinel (HandleAttempt with attempt 1).
func (p *Pipeline) Handle(ctx context.Context, sentinelID string, ev *sentinel.Event) (Result, error) {
	return p.HandleAttempt(ctx, sentinelID, ev, 1)
}

// HandleAttempt runs the pipeline for the attempt-th delivery of one event
// of one sentinel (the message's delivery count). A nil error means the
// event is handled and may be acked; an error means it must stay
// retryable: nothing was marked seen, or the record marks it Unconfirmed
// and its redelivery (attempt > 1) completes the inbox write (direct.go).
func (p *Pipeline) HandleAttempt(ctx context.Context, sentinelID string, ev *sentinel.Event, attempt uint64) (Result, error) {
	start := time.Now()
	defer p.Metrics.StepSince(metrics.StepPipeline, start)
	rec, rev, err := p.Store.Fresh(ctx, sentinelID)
	p.Metrics.StepSince(metrics.StepRecordRead, start)
	if errors.Is(err, sentinels.ErrNotFound) {
		p.note(sentinelID, nil, ev, journal.Stopped, "the sentinel no longer exists", nil)
		return ResultStopped, nil
	}
	if err != nil {
		return "", err
	}
	// 0. A redelivery of the event the record holds unconfirmed: its inbox
	// write may not have landed. Before the record's status or seen mark
	// (both already say handled) it is written again, idempotently.
	if attempt > 1 && rec.Unconfirmed == ev.ID {
		if pl, ok := p.Router.(Planner); ok {
			return p.confirm(ctx, pl, rec, ev)
		}
	}
	// 1. Gone or not pollable: stop.
	if !rec.Status.Pollable() {
		p.note(sentinelID, rec, ev, journal.Stopped, "the sentinel is "+string(rec.Status), nil)
		return ResultStopped, nil
	}
	now := p.Now()
	// 2. until.at passed: expire.
	if rec.ExpiredAt(now.UnixMilli()) {
		if err := p.Expirer.Expire(ctx, sentinelID, "until.at passed"); err != nil {
			return "", err
		}
		p.note(sentinelID, rec, ev, journal.Expired, "until.at passed: the sentinel expired", nil)
		return ResultExpired, nil
	}
	// 3. Seen: skip.
	// The ring holds every id this sentinel marked until it overflows;
	// only then is the long window in the seen bucket consulted.
	seen := rec.HasSeen(ev.ID)
	if !seen && rec.SeenMarks > rec.SeenLen() {
		if seen, err = p.Seen.Has(ctx, sentinelID, ev.ID); err != nil {
			return "", err
		}
	}
	if seen {
		p.Metrics.Inc(func(m *metrics.Metrics) prometheusCounter { return m.SeenDuplicates })
		p.note(sentinelID, rec, ev, journal.Duplicate, "already handled (in the seen window)", nil)
		return ResultDuplicate, nil
	}
	// 4. Closure tracking and post-mortem parking.
	closure := closureFor(rec, ev)
	if closure == closurePostMortem {
		reason := fmt.Sprintf("subject %s already closed", ev.Subject)
		if err := p.Park.Park(ctx, sentinelID, park.Record{SentinelID: sentinelID, Event: ev, Reason: reason}, "pm:"+sentinelID+":"+ev.ID); err != nil {
			return "", err
		}
		p.Metrics.IncVec(func(m *metrics.Metrics) prometheusCounterVec { return m.Parked }, "post_mortem")
		if err := p.markSeen(ctx, rec, rev, ev.ID, nil); err != nil {
			return "", err
		}
		p.note(sentinelID, rec, ev, journal.PostMortem, reason+": parked", nil)
		return ResultParked, nil
	}
	// 5. No match: filtered, not failed.
	var defaults sentinel.DefaultTypesFunc
	if prov, ok := p.Registry.Get(rec.Provider); ok {
		defaults = prov.DefaultTypes
	}
	if !rec.Spec.Matches(ev, defaults) {
		if err := p.markSeen(ctx, rec, rev, ev.ID, func(r *sentinel.Sentinel) { applyClosure(r, closure, ev.Subject) }); err != nil {
			return "", err
		}
		p.Metrics.Inc(func(m *metrics.Metrics) prometheusCounter { return m.Filtered })
		p.noteFiltered(rec, ev, defaults)
		return ResultFiltered, nil
	}
	// 5b. The loop shield: the provider's own doing does not wake the
	// session (never a terminal event); it is marked seen and journaled.
	if rec.Spec.MuteSelf && ev.SelfCaused && !ev.Terminal {
		if err := p.markSeen(ctx, rec, rev, ev.ID, func(r *sentinel.Sentinel) { applyClosure(r, closure, ev.Subject) }); err != nil {
			return "", err
		}
		p.note(sentinelID, rec, ev, journal.Self, "caused by the provider's own GitHub identity: muted (muteSelf)", nil)
		return ResultMuted, nil
	}
	// 6. Deliver. On the direct path (direct.go) the inbox message and the
	// record are written beside each other; otherwise the event is routed
	// (resume, successor, forward, park) and the record written after.
	if pl, ok := p.Router.(Planner); ok {
		resolved := time.Now()
		send, err := pl.Plan(ctx, rec, ev)
		p.Metrics.StepSince(metrics.StepResolve, resolved)
		if err != nil {
			return "", fmt.Errorf("deliver %s to %s: %w", ev.ID, sentinelID, err)
		}
		if send != nil {
			return p.deliverDirect(ctx, send, rec, rev, ev, closure, now)
		}
	}
	routed := time.Now()
	out, err := p.Router.Route(ctx, rec, ev)
	p.Metrics.StepSince(metrics.StepInbox, routed)
	if err != nil {
		return "", fmt.Errorf("deliver %s to %s: %w", ev.ID, sentinelID, err)
	}
	// 7. The outcome is stored (an inbox message or a park record), so the
	// record is written on a fresh bounded context: a resume hook that
	// used up the handle deadline must not send the event round again.
	sctx, cancel := settleContext(ctx)
	defer cancel()
	w, err := p.writeRecord(sctx, rec, rev, ev, out, closure, now, false)
	if err != nil {
		return "", err
	}
	return p.finish(sctx, rec, ev, out, w), nil
}

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
	defer p.Metrics.StepSince(metrics.StepRecordWrite, start)
	var w written
	first := true
	updated, err := p.Store.UpdateFrom(ctx, rec.ID, rec, rev, func(r *sentinel.Sentinel) error {
		w.expired = false
		if !first && r.HasSeen(ev.ID) {
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
		if err := p.addSeen(ctx, rec.ID, r, ev.ID); err != nil {
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
		p.note(rec.ID, rec, ev, journal.Duplicate, "handled by another node meanwhile", nil)
		return ResultDuplicate
	}
	p.noteOutcome(rec, ev, out)
	if w.expired {
		p.Metrics.Inc(func(m *metrics.Metrics) prometheusCounter { return m.Expired })
		p.Expirer.CancelProvider(ctx, w.updated)
	}
	switch {
	case out.Parked:
		p.Metrics.IncVec(func(m *metrics.Metrics) prometheusCounterVec { return m.Parked }, "dead_target")
		return ResultParked
	case out.Duplicate:
		p.Metrics.Inc(func(m *metrics.Metrics) prometheusCounter { return m.InboxDuplicates })
		return ResultDuplicate
	}
	p.Metrics.Inc(func(m *metrics.Metrics) prometheusCounter { return m.Delivered })
	return ResultDelivered
}

// GiveUp settles an event that cannot be delivered (a permanent failure,
// or one past its attempts): it parks it with the reason and marks it
// seen, on a fresh bounded context (the caller's may be spent). A nil
// error means the event may be acked; an error (the park or the mark could
// not be stored) leaves it to be retried.
func (p *Pipeline) GiveUp(ctx context.Context, sentinelID string, ev *sentinel.Event, reason string) error {
	sctx, cancel := settleContext(ctx)
	defer cancel()
	if err := p.Park.Park(sctx, sentinelID, park.Record{SentinelID: sentinelID, Event: ev, Reason: reason}, "failed:"+sentinelID+":"+ev.ID); err != nil {
		return err
	}
	p.Metrics.IncVec(func(m *metrics.Metrics) prometheusCounterVec { return m.Parked }, "undeliverable")
	p.note(sentinelID, nil, ev, journal.Undeliverable, reason+": parked", nil)
	rec, rev, err := p.Store.Get(sctx, sentinelID)
	if errors.Is(err, sentinels.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	return p.markSeen(sctx, rec, rev, ev.ID, nil)
}

// markSeen records a handled-but-not-delivered event id in the record's
// ring (with an optional extra change), moving what the ring evicts to the
// long window first.
func (p *Pipeline) markSeen(ctx context.Context, rec *sentinel.Sentinel, rev uint64, eventID string, also func(*sentinel.Sentinel)) error {
	_, err := p.Store.UpdateFrom(ctx, rec.ID, rec, rev, func(r *sentinel.Sentinel) error {
		if also != nil {
			also(r)
		}
		return p.addSeen(ctx, rec.ID, r, eventID)
	})
	if err != nil && !errors.Is(err, sentinels.ErrNotFound) {
		return err
	}
	return nil
}

// addSeen adds the event id to the record's ring. The digests the ring
// evicts are written to the long window before the record itself (this
// runs inside the record's compare-and-set function): a crash between the
// two writes leaves an id in both places, never in neither. Keeping a
// digest is idempotent, so a retried compare-and-set is safe; a failure
// fails the record write and leaves the event to be retried.
func (p *Pipeline) addSeen(ctx context.Context, sentinelID string, r *sentinel.Sentinel, eventID string) error {
	if r.HasSeen(eventID) {
		return nil
	}
	r.SeenMarks++
	for _, d := range r.AddSeen(eventID) {
		if err := p.Seen.Keep(ctx, sentinelID, d); err != nil {
			return fmt.Errorf("keep evicted seen id of %s: %w", sentinelID, err)
		}
	}
	return nil
}

type closureAction int

const (
	closureNone closureAction = iota
	closureClose
	closureReopen
	closurePostMortem
)

// closureFor decides the closedSubjects action: a terminal event on a
// watched, open subject closes it; a .reopened event on a closed subject
// reopens it; a non-terminal event on a closed subject is post-mortem
// noise.
func closureFor(rec *sentinel.Sentinel, ev *sentinel.Event) closureAction {
	closed := rec.IsClosed(ev.Subject)
	switch {
	case ev.IsReopened() && closed:
		return closureReopen
	case ev.Terminal && !closed && rec.Spec.WatchesSubject(ev):
		return closureClose
	case !ev.Terminal && closed:
		return closurePostMortem
	}
	return closureNone
}

func applyClosure(r *sentinel.Sentinel, a closureAction, subject string) {
	switch a {
	case closureClose:
		r.MarkClosed(subject)
	case closureReopen:
		r.Reopen(subject)
	}
}
