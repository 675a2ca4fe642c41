package subscriptions

import (
	"context"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/runtime/deliver"
)

// Router delivers the events of mcp-events sentinels to their
// subscription's feed and every other sentinel's through Next: a
// subscription's events never reach a session inbox.
type Router struct {
	Next deliver.Router
	Feed *Feed
}

// Route implements deliver.Router.
func (r Router) Route(ctx context.Context, rec *sentinel.Sentinel, ev *sentinel.Event) (deliver.Outcome, error) {
	t := rec.Spec.Target
	if t.Kind != sentinel.TargetMCPEvents {
		return r.Next.Route(ctx, rec, ev)
	}
	dup, err := r.Feed.Append(ctx, t.Mode, t.SubscriptionID, ev)
	if err != nil {
		return deliver.Outcome{}, err
	}
	return deliver.Outcome{Duplicate: dup}, nil
}

var _ deliver.Router = Router{}
