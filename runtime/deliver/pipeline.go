package deliver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
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
}

// Handle runs the pipeline for one event of one sentinel. A nil error means
// the event is handled and may be acked; an error means it must stay
// retryable (nothing was marked seen).
func (p *Pipeline) Handle(ctx context.Context, sentinelID string, ev *sentinel.Event) (Result, error) {
	rec, rev, err := p.Store.Peek(ctx, sentinelID)
	if errors.Is(err, sentinels.ErrNotFound) {
		return ResultStopped, nil
	}
	if err != nil {
		return "", err
	}
	// 1. Gone or not pollable: stop.
	if !rec.Status.Pollable() {
		return ResultStopped, nil
	}
	now := p.Now()
	// 2. until.at passed: expire.
	if rec.ExpiredAt(now.UnixMilli()) {
		if err := p.Expirer.Expire(ctx, sentinelID, "until.at passed"); err != nil {
			return "", err
		}
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
		return ResultFiltered, nil
	}
	// 6. Deliver.
	out, err := p.Router.Route(ctx, rec, ev)
	if err != nil {
		return "", fmt.Errorf("deliver %s to %s: %w", ev.ID, sentinelID, err)
	}
	// 7. Mark seen (the in-record ring), counters, target, status, until:
	// one atomic write.
	expired := false
	var evicted []string
	updated, err := p.Store.UpdateFrom(ctx, sentinelID, rec, rev, func(r *sentinel.Sentinel) error {
		expired = false
		applyClosure(r, closure, ev.Subject)
		evicted = addSeen(r, ev.ID)
		if r.LastHandledID != ev.ID {
			r.EventCount++
			r.LastEventTs = now.UnixMilli()
			r.LastHandledID = ev.ID
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
				expired = true
			}
		case sentinel.UntilCount:
			expired = r.EventCount >= r.Spec.Until.N
		case sentinel.UntilAt:
			expired = now.UnixMilli() >= r.Spec.Until.Ms
		}
		if expired && r.Status.Pollable() {
			r.Status = sentinel.StatusExpired
		}
		return nil
	})
	if errors.Is(err, sentinels.ErrNotFound) {
		// Removed while delivering: the message is already stored.
		return ResultDelivered, nil
	}
	if err != nil {
		return "", err
	}
	p.keepEvicted(ctx, sentinelID, evicted)
	if expired {
		p.Metrics.Inc(func(m *metrics.Metrics) prometheusCounter { return m.Expired })
		p.Expirer.CancelProvider(ctx, updated)
	}
	if sentinels.ShouldPrune(updated.SeenMarks) {
		if _, err := p.Seen.Prune(ctx, sentinelID); err != nil {
			p.Log.Warn("seen prune failed", "sentinel", sentinelID, "err", err)
		}
	}
	switch {
	case out.Parked:
		p.Metrics.IncVec(func(m *metrics.Metrics) prometheusCounterVec { return m.Parked }, "dead_target")
		return ResultParked, nil
	case out.Duplicate:
		p.Metrics.Inc(func(m *metrics.Metrics) prometheusCounter { return m.InboxDuplicates })
		return ResultDuplicate, nil
	}
	p.Metrics.Inc(func(m *metrics.Metrics) prometheusCounter { return m.Delivered })
	return ResultDelivered, nil
}

// markSeen records a handled-but-not-delivered event id in the record's
// ring (with an optional extra change) and, best effort, in the long
// window.
func (p *Pipeline) markSeen(ctx context.Context, rec *sentinel.Sentinel, rev uint64, eventID string, also func(*sentinel.Sentinel)) error {
	var evicted []string
	_, err := p.Store.UpdateFrom(ctx, rec.ID, rec, rev, func(r *sentinel.Sentinel) error {
		if also != nil {
			also(r)
		}
		evicted = addSeen(r, eventID)
		return nil
	})
	if err != nil && !errors.Is(err, sentinels.ErrNotFound) {
		return err
	}
	p.keepEvicted(ctx, rec.ID, evicted)
	return nil
}

// keepEvicted moves digests evicted from the ring to the long window. A
// failure is logged: the ring already holds the newest 1000 ids.
func (p *Pipeline) keepEvicted(ctx context.Context, sentinelID string, digests []string) {
	for _, d := range digests {
		if err := p.Seen.Keep(ctx, sentinelID, d); err != nil {
			p.Log.Warn("keeping an evicted seen id failed", "sentinel", sentinelID, "err", err)
		}
	}
}

func addSeen(r *sentinel.Sentinel, eventID string) []string {
	if r.HasSeen(eventID) {
		return nil
	}
	r.SeenMarks++
	return r.AddSeen(eventID)
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
