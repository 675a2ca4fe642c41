package deliver

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/runtime/journal"
	"github.com/agentproto/sentinel/runtime/sentinels"
)

// Replayed is what a replay did.
type Replayed struct {
	// Decision is the re-run's decision: delivered, duplicate (the inbox
	// already held it: a second replay), dead-target, filtered.
	Decision  string
	Reason    string
	Session   string
	MessageID string
}

// Replay re-runs a parked event of a sentinel through the pipeline to the
// sentinel's current target, bypassing only the seen window (a parked
// event was marked seen): a non-terminal event on a closed subject is
// refused with post_mortem unless force; an event the spec no longer
// matches is filtered; otherwise it is routed (dead-target routing
// applies). The inbox message id is derived from the sentinel and the
// event, so replaying twice delivers once. A delivery counts in the
// record's counters; until conditions are not re-evaluated. The decision
// is journaled as replayed. Errors: sentinel_not_found, post_mortem, and
// routing failures.
func (p *Pipeline) Replay(ctx context.Context, sentinelID string, ev *sentinel.Event, parkID string, force bool) (Replayed, error) {
	rec, rev, err := p.store.Fresh(ctx, sentinelID)
	if errors.Is(err, sentinels.ErrNotFound) {
		return Replayed{}, sentinel.Errorf(sentinel.CodeSentinelNotFound, "sentinel %s no longer exists: its parked events cannot be replayed", sentinelID)
	}
	if err != nil {
		return Replayed{}, err
	}
	if !force && closureFor(rec, ev) == closurePostMortem {
		return Replayed{}, sentinel.Errorf(sentinel.CodePostMortem, "subject %s already closed for %s: the event is post-mortem noise (replay with force to deliver it anyway)", ev.Subject, sentinelID)
	}
	var defaults sentinel.DefaultTypesFunc
	if prov, ok := p.registry.Get(rec.Provider); ok {
		defaults = prov.DefaultTypes
	}
	var res Replayed
	if misses := rec.Spec.Misses(ev, defaults); len(misses) > 0 {
		res = Replayed{Decision: journal.Filtered, Reason: journal.FilteredReason(misses, ev.Type)}
	} else {
		out, err := p.router.Route(ctx, rec, ev)
		if Permanent(err) {
			return Replayed{}, sentinel.Errorf(sentinel.CodeNotReplayable, "event %s can never be delivered (%v): replaying it cannot help", ev.ID, err)
		}
		if err != nil {
			return Replayed{}, fmt.Errorf("replay %s to %s: %w", ev.ID, sentinelID, err)
		}
		res = replayedOf(rec, out)
		if err := p.settleReplay(ctx, rec, rev, out); err != nil {
			return Replayed{}, err
		}
	}
	p.note(sentinelID, rec, ev, journal.Replayed, fmt.Sprintf("replay of %s: %s %s", parkID, res.Decision, res.Reason), func(e *sentinel.Decision) {
		e.Session, e.MessageID = res.Session, res.MessageID
	})
	return res, nil
}

// replayedOf names a routing outcome as a replay's decision.
func replayedOf(rec *sentinel.Sentinel, out Outcome) Replayed {
	var r Replayed
	if out.Message != nil {
		r.Session, r.MessageID = out.Message.To, out.Message.ID
	}
	switch {
	case out.Parked:
		r.Decision, r.Reason = journal.DeadTarget, "parked again: "+out.Reason
	case out.Duplicate:
		r.Decision, r.Reason = journal.Duplicate, "already delivered (the inbox holds this message)"
	case out.Merged:
		r.Decision, r.Reason = journal.Merged, "another sentinel of the session already showed this event (message "+out.MergedInto+")"
	case out.Message != nil && out.RetargetTo == "" && out.Message.To != rec.Spec.Target.SessionID:
		r.Decision, r.Reason = journal.DeadTarget, "forwarded to the parent session "+out.Message.To
	default:
		r.Decision = journal.Delivered
	}
	return r
}

// settleReplay applies a replayed delivery to the record: counters, a
// retarget to a resumed session, the orphaned status.
func (p *Pipeline) settleReplay(ctx context.Context, rec *sentinel.Sentinel, rev uint64, out Outcome) error {
	sctx, cancel := settleContext(ctx)
	defer cancel()
	now := p.now()
	_, err := p.store.UpdateFrom(sctx, rec.ID, rec, rev, func(r *sentinel.Sentinel) error {
		if !out.Parked && !out.Duplicate {
			r.EventCount++
			r.LastEventTs = now.UnixMilli()
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
		return nil
	})
	if err != nil && !errors.Is(err, sentinels.ErrNotFound) {
		return err
	}
	return nil
}
