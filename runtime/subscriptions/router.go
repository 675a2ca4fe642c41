package subscriptions

import (
	"context"
	"fmt"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/runtime/deliver"
)

// Router delivers the events of mcp-events sentinels to their
// subscription's feed and every other sentinel's through Next: a
// subscription's events never reach a session inbox.
type Router struct {
	next deliver.Router
	feed *Feed
}

// NewRouter delivers mcp-events sentinels' events to feed and every other
// sentinel's through next.
func NewRouter(next deliver.Router, feed *Feed) Router { return Router{next: next, feed: feed} }

// Route implements deliver.Router.
func (r Router) Route(ctx context.Context, rec *sentinel.Sentinel, ev *sentinel.Event) (deliver.Outcome, error) {
	t := rec.Spec.Target
	if t.Kind != sentinel.TargetMCPEvents {
		return r.next.Route(ctx, rec, ev)
	}
	return r.feedSend(t, ev)(ctx)
}

// feedSend stores ev in the feed of t's subscription (idempotent: the feed
// refuses a second copy). It reads nothing but t and ev.
func (r Router) feedSend(t sentinel.Target, ev *sentinel.Event) deliver.Send {
	return func(ctx context.Context) (deliver.Outcome, error) {
		dup, err := r.feed.Append(ctx, t.Mode, t.SubscriptionID, ev)
		if err != nil {
			return deliver.Outcome{}, err
		}
		return deliver.Outcome{Duplicate: dup}, nil
	}
}

// Plan implements deliver.Planner: a subscription's feed always takes its
// events as they are; other targets ask Next (nil when Next cannot plan).
func (r Router) Plan(ctx context.Context, rec *sentinel.Sentinel, ev *sentinel.Event) (deliver.Send, error) {
	if rec.Spec.Target.Kind == sentinel.TargetMCPEvents {
		return r.Prepare(rec, ev)
	}
	if pl, ok := r.next.(deliver.Planner); ok {
		return pl.Plan(ctx, rec, ev)
	}
	return nil, nil
}

// Prepare implements deliver.Planner (idempotent: the feed and the inbox
// refuse a second copy).
func (r Router) Prepare(rec *sentinel.Sentinel, ev *sentinel.Event) (deliver.Send, error) {
	if t := rec.Spec.Target; t.Kind == sentinel.TargetMCPEvents {
		// The Send reads nothing of rec (the pipeline writes it meanwhile).
		return r.feedSend(t, ev), nil
	}
	pl, ok := r.next.(deliver.Planner)
	if !ok {
		return nil, fmt.Errorf("deliver %s: the router of %s targets cannot deliver directly", ev.ID, rec.Spec.Target.Kind)
	}
	return pl.Prepare(rec, ev)
}

var _ deliver.Planner = Router{}
