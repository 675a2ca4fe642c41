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
	"github.com/agentproto/sentinel/runtime/pause"
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
	// ResultMerged: another sentinel of the same session had already shown
	// the event (one message per session and event); counted, not shown.
	ResultMerged Result = "merged"
)

// Pipeline is the per-event pipeline shared by polled and pushed events.
// Build it with NewPipeline.
type Pipeline struct {
	store    *sentinels.Store
	seen     *sentinels.Seen
	registry *providers.Registry
	router   Router
	park     *park.Store
	// expirer cancels the provider of an expired sentinel, best effort.
	expirer *sentinels.Expirer

	metrics *metrics.Metrics
	log     *slog.Logger
	now     func() time.Time
	// decisions records every decision (decisions.go); nil records nothing.
	decisions DecisionRecorder
	// pause holds the pipeline's and the workers' named pause points
	// (points.go; tests, nil in production).
	pause *pause.Points
	// recordReadTimeout bounds Handle's read of the record through the
	// records bucket's leader (0: DefaultRecordReadTimeout).
	recordReadTimeout time.Duration
	// batches, when set, holds the events of sentinels with a batchMs for
	// their digest (batch.go); nil delivers every event as it comes.
	batches *Batches
}

// DefaultRecordReadTimeout is the default of WithRecordReadTimeout.
// The read is a request to the records bucket's leader: while that leader
// is dead and its successor not yet elected, the live servers answer
// nothing (and send no "no responders"), so only a deadline ends it. Bound
// by the handler's whole timeout instead (30 s), a worker kept its
// delivery in progress (its pings go on) and its partition stalled for
// that long (chaos seed 196: delivery resumed 36.7 s after a kill). A
// read that times out fails the run, which is retried after its backoff.
const DefaultRecordReadTimeout = 5 * time.Second

func (p *Pipeline) readTimeout() time.Duration {
	if p.recordReadTimeout > 0 {
		return p.recordReadTimeout
	}
	return DefaultRecordReadTimeout
}

// Handle runs the pipeline for one event of one sentinel. A nil error
// means the event is handled and may be acked; an error means it must stay
// retryable: nothing was marked seen, or the record marks it Unconfirmed
// and the event's next delivery completes the inbox write (direct.go).
func (p *Pipeline) Handle(ctx context.Context, sentinelID string, ev *sentinel.Event) (Result, error) {
	start := time.Now()
	defer p.metrics.StepSince(metrics.StepPipeline, start)
	rctx, cancel := context.WithTimeout(ctx, p.readTimeout())
	rec, rev, err := p.store.Fresh(rctx, sentinelID)
	cancel()
	p.metrics.StepSince(metrics.StepRecordRead, start)
	if errors.Is(err, sentinels.ErrNotFound) {
		p.note(sentinelID, nil, ev, journal.Stopped, "the sentinel no longer exists", nil)
		return ResultStopped, nil
	}
	if err != nil {
		return "", err
	}
	if err := p.pause.At(ctx, PointRead, ev.ID); err != nil {
		return "", err
	}
	// 0. The event the record holds unconfirmed, again: its inbox write may
	// not have landed. Before the record's status or seen mark (both
	// already say handled) it is written again, idempotently. The delivery
	// count cannot tell a redelivery here: a node killed with the event in
	// flight may restart with a consumer that never stored the delivery.
	if rec.Unconfirmed == ev.ID && p.withinConfirmWindow(rec) {
		if pl, ok := p.router.(Planner); ok {
			return p.confirm(ctx, pl, rec, ev)
		}
	}
	// 1. Gone or not pollable: stop.
	if !rec.Status.Pollable() {
		p.note(sentinelID, rec, ev, journal.Stopped, "the sentinel is "+string(rec.Status), nil)
		return ResultStopped, nil
	}
	now := p.now()
	// 2. until.at passed: expire.
	if rec.ExpiredAt(now.UnixMilli()) {
		if err := p.expirer.Expire(ctx, sentinelID, "until.at passed"); err != nil {
			return "", err
		}
		p.note(sentinelID, rec, ev, journal.Expired, "until.at passed: the sentinel expired", nil)
		return ResultExpired, nil
	}
	// 3. Seen (its id or its body key, seenkeys.go): skip.
	seen, err := p.seenBefore(ctx, rec, ev)
	if err != nil {
		return "", err
	}
	if seen {
		p.countSeenDuplicate()
		p.note(sentinelID, rec, ev, journal.Duplicate, "already handled (in the seen window)", nil)
		return ResultDuplicate, nil
	}
	// 4. Closure tracking and post-mortem parking.
	closure := closureFor(rec, ev)
	if closure == closurePostMortem {
		reason := fmt.Sprintf("subject %s already closed", ev.Subject)
		if err := p.park.Park(ctx, sentinelID, sentinel.Parked{SentinelID: sentinelID, Event: ev, Reason: reason}, "pm:"+sentinelID+":"+ev.ID); err != nil {
			return "", err
		}
		p.metrics.IncVec(func(m *metrics.Metrics) prometheusCounterVec { return m.Parked }, "post_mortem")
		elsewhere, err := p.markSeen(ctx, rec, rev, ev, closureNone)
		if err != nil {
			return "", err
		}
		if elsewhere {
			return p.handledElsewhere(ctx, rec, ev), nil
		}
		p.note(sentinelID, rec, ev, journal.PostMortem, reason+": parked", nil)
		return ResultParked, nil
	}
	// 5. No match: filtered, not failed.
	var defaults sentinel.DefaultTypesFunc
	if prov, ok := p.registry.Get(rec.Provider); ok {
		defaults = prov.DefaultTypes
	}
	if !rec.Spec.Matches(ev, defaults) {
		elsewhere, err := p.markSeen(ctx, rec, rev, ev, closure)
		if err != nil {
			return "", err
		}
		if elsewhere {
			return p.handledElsewhere(ctx, rec, ev), nil
		}
		p.metrics.Inc(func(m *metrics.Metrics) prometheusCounter { return m.Filtered })
		p.noteFiltered(rec, ev, defaults)
		return ResultFiltered, nil
	}
	// 5b. The loop shield: the provider's own doing does not wake the
	// session (never a terminal event); it is marked seen and journaled.
	if rec.Spec.MuteSelf && ev.SelfCaused && !ev.Terminal {
		elsewhere, err := p.markSeen(ctx, rec, rev, ev, closure)
		if err != nil {
			return "", err
		}
		if elsewhere {
			return p.handledElsewhere(ctx, rec, ev), nil
		}
		p.note(sentinelID, rec, ev, journal.Self, "caused by the provider's own GitHub identity: muted (muteSelf)", nil)
		return ResultMuted, nil
	}
	// 6. Deliver. On the direct path (direct.go) the inbox message and the
	// record are written beside each other; otherwise the event is routed
	// (resume, successor, forward, park) and the record written after.
	if pl, ok := p.router.(Planner); ok {
		resolved := time.Now()
		send, err := pl.Plan(ctx, rec, ev)
		p.metrics.StepSince(metrics.StepResolve, resolved)
		if err != nil {
			return "", fmt.Errorf("deliver %s to %s: %w", ev.ID, sentinelID, err)
		}
		if send != nil {
			return p.deliverDirect(ctx, p.batched(rec, ev, send), rec, rev, ev, closure, now)
		}
	}
	if err := p.beforeSend(ctx, ev); err != nil {
		return "", err
	}
	if err := p.flushBeforeTerminal(ctx, rec, ev); err != nil {
		return "", fmt.Errorf("deliver %s to %s: %w", ev.ID, sentinelID, err)
	}
	routed := time.Now()
	out, err := p.router.Route(ctx, rec, ev)
	p.metrics.StepSince(metrics.StepInbox, routed)
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

// GiveUp settles an event that cannot be delivered (a permanent failure,
// or one past its attempts): it parks it with the reason and marks it
// seen, on a fresh bounded context (the caller's may be spent). A nil
// error means the event may be acked; an error (the park or the mark could
// not be stored) leaves it to be retried.
func (p *Pipeline) GiveUp(ctx context.Context, sentinelID string, ev *sentinel.Event, reason string) error {
	sctx, cancel := settleContext(ctx)
	defer cancel()
	if err := p.park.Park(sctx, sentinelID, sentinel.Parked{SentinelID: sentinelID, Event: ev, Reason: reason}, "failed:"+sentinelID+":"+ev.ID); err != nil {
		return err
	}
	p.metrics.IncVec(func(m *metrics.Metrics) prometheusCounterVec { return m.Parked }, "undeliverable")
	p.note(sentinelID, nil, ev, journal.Undeliverable, reason+": parked", nil)
	rec, rev, err := p.store.Get(sctx, sentinelID)
	if errors.Is(err, sentinels.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	_, err = p.markSeen(sctx, rec, rev, ev, closureNone)
	return err
}

// handledElsewhere journals an event whose record write found that another
// handler (its redelivery) had stored it meanwhile, and gives the worker's
// hold on the delivery up: it is that handler's to settle.
func (p *Pipeline) handledElsewhere(ctx context.Context, rec *sentinel.Sentinel, ev *sentinel.Event) Result {
	deliveryOf(ctx).fence()
	p.note(rec.ID, rec, ev, journal.Duplicate, "handled by another node meanwhile", nil)
	return ResultDuplicate
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
