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
	rec, _, err := p.Store.Get(ctx, sentinelID)
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
	seen, err := p.Seen.Has(ctx, sentinelID, ev.ID)
	if err != nil {
		return "", err
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
		if err := p.Seen.Mark(ctx, sentinelID, ev.ID); err != nil {
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
		if closure != closureNone {
			if _, err := p.Store.Update(ctx, sentinelID, func(r *sentinel.Sentinel) error {
				applyClosure(r, closure, ev.Subject)
				return nil
			}); err != nil && !errors.Is(err, sentinels.ErrNotFound) {
				return "", err
			}
		}
		if err := p.Seen.Mark(ctx, sentinelID, ev.ID); err != nil {
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
	// 7. Counters, target, status, until; then mark seen.
	expired := false
	updated, err := p.Store.Update(ctx, sentinelID, func(r *sentinel.Sentinel) error {
		expired = false
		applyClosure(r, closure, ev.Subject)
		if r.LastHandledID != ev.ID {
			r.EventCount++
			r.LastEventTs = now.UnixMilli()
			r.LastHandledID = ev.ID
		}
		r.SeenMarks++
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
	if err := p.Seen.Mark(ctx, sentinelID, ev.ID); err != nil {
		return "", err
	}
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
