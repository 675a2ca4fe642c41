package deliver_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/runtime/deliver"
	"github.com/agentproto/sentinel/runtime/runtimetest"
)

// successorRouter plays a node that paused past the ack wait: while it
// routes, the event's redelivery and the next event are handled by
// another node (the shared pipeline), which writes the record first.
type successorRouter struct {
	inner deliver.Router
	run   func()
	done  bool
}

func (r *successorRouter) Route(ctx context.Context, rec *sentinel.Sentinel, ev *sentinel.Event) (deliver.Outcome, error) {
	if !r.done {
		r.done = true
		r.run()
	}
	return r.inner.Route(ctx, rec, ev)
}

// A stale handler's write is fenced: the record already holds the event,
// so it neither counts it again nor re-applies its closure decision.
func TestStaleHandlerCannotOverwriteItsSuccessor(t *testing.T) {
	e := runtimetest.Start(t, runtimetest.Options{})
	rec := watchPR(e, "s1", nil, pr)
	ctx := context.Background()
	ev1 := runtimetest.Event("evt_1", "x.y.z", pr, false)
	ev2 := runtimetest.Event("evt_2", "x.y.z", pr, false)

	stale := e.Pipeline.WithRouter(&successorRouter{inner: e.Pipeline.Router(), run: func() {
		res, err := e.Pipeline.Handle(ctx, rec.ID, &ev1)
		require.NoError(t, err)
		require.Equal(t, deliver.ResultDelivered, res)
		res, err = e.Pipeline.Handle(ctx, rec.ID, &ev2)
		require.NoError(t, err)
		require.Equal(t, deliver.ResultDelivered, res)
	}})
	res, err := stale.Handle(ctx, rec.ID, &ev1)
	require.NoError(t, err)
	require.Equal(t, deliver.ResultDuplicate, res, "the successor handled it")
	got := e.Get(rec.ID)
	require.Equal(t, 2, got.EventCount, "each event counted once")
	require.Equal(t, "evt_2", got.LastHandledID)
	require.Len(t, e.WaitInbox("s1", 2), 2)
}
