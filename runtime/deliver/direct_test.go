package deliver_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/runtime/deliver"
	"github.com/agentproto/sentinel/runtime/runtimetest"
)

// failingSends is a Planner whose first failures Sends fail without
// storing anything, as a message write lost with its node would (the
// record write beside it lands). It counts the Sends it was asked for.
type failingSends struct {
	inner    deliver.Planner
	failures atomic.Int32
	sends    atomic.Int32
	// before, when set, runs once in Plan, before either write starts.
	before func()
}

var errLostWrite = errors.New("the inbox write was lost")

func (f *failingSends) Route(ctx context.Context, rec *sentinel.Sentinel, ev *sentinel.Event) (deliver.Outcome, error) {
	return f.inner.Route(ctx, rec, ev)
}

func (f *failingSends) Plan(ctx context.Context, rec *sentinel.Sentinel, ev *sentinel.Event) (deliver.Send, error) {
	if f.before != nil {
		run := f.before
		f.before = nil
		run()
	}
	send, err := f.inner.Plan(ctx, rec, ev)
	return f.wrap(send), err
}

func (f *failingSends) Prepare(rec *sentinel.Sentinel, ev *sentinel.Event) (deliver.Send, error) {
	send, err := f.inner.Prepare(rec, ev)
	return f.wrap(send), err
}

func (f *failingSends) wrap(send deliver.Send) deliver.Send {
	if send == nil {
		return nil
	}
	return func(ctx context.Context) (deliver.Outcome, error) {
		f.sends.Add(1)
		if f.failures.Add(-1) >= 0 {
			return deliver.Outcome{}, errLostWrite
		}
		return send(ctx)
	}
}

func directRouter(e *runtimetest.Env) deliver.Planner {
	return deliver.NewDirectRouter(e.Inbox, deliver.WithDirectRouterClock(e.Clock.Now))
}

// withFailingSends starts an env without workers whose pipeline routes
// through a failingSends over the direct router.
func withFailingSends(t *testing.T, failures int32) (*runtimetest.Env, *failingSends) {
	f := &failingSends{}
	e := runtimetest.Start(t, runtimetest.Options{NoWorkers: true, Router: f})
	f.inner = directRouter(e)
	f.failures.Store(failures)
	return e, f
}

// The direct path writes the record beside the inbox message. When the
// message write fails after the record (seen mark, counters) landed, the
// record marks the event unconfirmed and its redelivery writes the message,
// once, without counting the event again.
func TestDirectPathCompletesALostInboxWriteOnRedelivery(t *testing.T) {
	e, f := withFailingSends(t, 1)
	defer func() { require.Equal(t, int32(3), f.sends.Load(), "one write per delivery") }()
	rec := watchPR(e, "s1", nil, pr)
	ctx := context.Background()
	ev := runtimetest.Event("evt_1", "x.y.z", pr, false)

	_, err := e.Pipeline.Handle(ctx, rec.ID, &ev)
	require.ErrorIs(t, err, errLostWrite, "the event stays unacknowledged")
	got := e.Get(rec.ID)
	require.True(t, got.HasSeen("evt_1"), "the record write beside it landed")
	require.Equal(t, "evt_1", got.Unconfirmed)
	require.Empty(t, e.InboxOf("s1"))

	res, err := e.Pipeline.Handle(ctx, rec.ID, &ev)
	require.NoError(t, err)
	require.Equal(t, deliver.ResultDelivered, res)
	require.Len(t, e.InboxOf("s1"), 1)

	res, err = e.Pipeline.Handle(ctx, rec.ID, &ev)
	require.NoError(t, err)
	require.Equal(t, deliver.ResultDuplicate, res, "a further redelivery finds the message")
	require.Len(t, e.InboxOf("s1"), 1, "nothing shows twice")
	require.Equal(t, 1, e.Get(rec.ID).EventCount, "counted once")
}

// The record write of the event that met until.count already says
// expired: its redelivery still delivers the message (the unconfirmed mark
// is read before the status).
func TestDirectPathCompletesTheEventThatExpiredItsSentinel(t *testing.T) {
	e, _ := withFailingSends(t, 1)
	rec := watchPR(e, "s1", &sentinel.UntilArg{Until: sentinel.Until{Kind: sentinel.UntilCount, N: 1}}, pr)
	ctx := context.Background()
	ev := runtimetest.Event("evt_1", "x.y.z", pr, false)

	_, err := e.Pipeline.Handle(ctx, rec.ID, &ev)
	require.ErrorIs(t, err, errLostWrite)
	require.Equal(t, sentinel.StatusExpired, e.Get(rec.ID).Status)

	res, err := e.Pipeline.Handle(ctx, rec.ID, &ev)
	require.NoError(t, err)
	require.Equal(t, deliver.ResultDelivered, res, "delivered, not stopped")
	require.Len(t, e.InboxOf("s1"), 1)
}

// The same event again after its record was written and its inbox write
// lost, with no redelivery count to tell (a node killed with the event in
// flight restarts with a consumer that never stored the delivery): the
// unconfirmed mark alone sends it to the inbox, once.
func TestUnconfirmedEventIsCompletedWithoutARedeliveryCount(t *testing.T) {
	e, f := withFailingSends(t, 1)
	rec := watchPR(e, "s1", nil, pr)
	ctx := context.Background()
	ev := runtimetest.Event("evt_1", "x.y.z", pr, false)
	_, err := e.Pipeline.Handle(ctx, rec.ID, &ev)
	require.ErrorIs(t, err, errLostWrite)
	res, err := e.Pipeline.Handle(ctx, rec.ID, &ev)
	require.NoError(t, err)
	require.Equal(t, deliver.ResultDelivered, res)
	require.Len(t, e.InboxOf("s1"), 1)
	require.Equal(t, int32(2), f.sends.Load())
}

// A copy of the last handled event that arrives long after it was handled
// (past the confirm window: a sender's retry days later) is a seen
// duplicate, with no write: its message may have aged out of the inbox.
func TestLateCopyOfTheLastEventIsASeenDuplicate(t *testing.T) {
	e, f := withFailingSends(t, 0)
	rec := watchPR(e, "s1", nil, pr)
	ctx := context.Background()
	ev := runtimetest.Event("evt_1", "x.y.z", pr, false)

	res, err := e.Pipeline.Handle(ctx, rec.ID, &ev)
	require.NoError(t, err)
	require.Equal(t, deliver.ResultDelivered, res)
	require.Equal(t, int32(1), f.sends.Load())

	res, err = e.Pipeline.Handle(ctx, rec.ID, &ev)
	require.NoError(t, err)
	require.Equal(t, deliver.ResultDuplicate, res, "a copy within the window finds its message")
	require.Equal(t, int32(2), f.sends.Load(), "by writing it again, idempotently")

	e.Clock.Advance(25 * time.Hour)
	res, err = e.Pipeline.Handle(ctx, rec.ID, &ev)
	require.NoError(t, err)
	require.Equal(t, deliver.ResultDuplicate, res)
	require.Equal(t, int32(2), f.sends.Load(), "past the window: the seen mark, no write")
	require.Len(t, e.InboxOf("s1"), 1)
}

// The next event's record write clears the previous event's mark.
func TestNextEventClearsTheUnconfirmedMark(t *testing.T) {
	e, _ := withFailingSends(t, 0)
	rec := watchPR(e, "s1", nil, pr)
	ctx := context.Background()
	for _, id := range []string{"evt_1", "evt_2"} {
		ev := runtimetest.Event(id, "x.y.z", pr, false)
		_, err := e.Pipeline.Handle(ctx, rec.ID, &ev)
		require.NoError(t, err)
		require.Equal(t, id, e.Get(rec.ID).Unconfirmed)
	}
	filtered := runtimetest.Event("evt_3", "x.y.z", "github:acme/elsewhere#1", false)
	res, err := e.Pipeline.Handle(ctx, rec.ID, &filtered)
	require.NoError(t, err)
	require.Equal(t, deliver.ResultFiltered, res)
	require.Len(t, e.InboxOf("s1"), 2)
}

// A stale handler on the direct path is fenced like one on the routed
// path: its successor handled the event (and the next) meanwhile, so its
// record write is refused by the record's revision and its message write
// by the inbox.
func TestStaleDirectHandlerCannotOverwriteItsSuccessor(t *testing.T) {
	direct := &failingSends{}
	e := runtimetest.Start(t, runtimetest.Options{NoWorkers: true, Router: direct})
	direct.inner = directRouter(e)
	rec := watchPR(e, "s1", nil, pr)
	ctx := context.Background()
	ev1 := runtimetest.Event("evt_1", "x.y.z", pr, false)
	ev2 := runtimetest.Event("evt_2", "x.y.z", pr, false)

	f := &failingSends{inner: directRouter(e), before: func() {
		for _, ev := range []*sentinel.Event{&ev1, &ev2} {
			res, err := e.Pipeline.Handle(ctx, rec.ID, ev)
			require.NoError(t, err)
			require.Equal(t, deliver.ResultDelivered, res)
		}
	}}
	stale := e.Pipeline.WithRouter(f)
	res, err := stale.Handle(ctx, rec.ID, &ev1)
	require.NoError(t, err)
	require.Equal(t, deliver.ResultDuplicate, res, "the successor handled it")
	got := e.Get(rec.ID)
	require.Equal(t, 2, got.EventCount, "each event counted once")
	require.Equal(t, "evt_2", got.LastHandledID)
	require.Equal(t, "evt_2", got.Unconfirmed, "the stale write did not land")
	require.Len(t, e.InboxOf("s1"), 2)
}

// Through the delivery workers: a lost inbox write is retried by the
// redelivery (the worker passes the delivery count), and the event lands
// once, in order with the next one.
func TestWorkersRedeliverALostInboxWriteOnce(t *testing.T) {
	f := &failingSends{}
	e := runtimetest.Start(t, runtimetest.Options{Partitions: 1, NoWorkers: true, Router: f})
	f.inner = directRouter(e)
	f.failures.Store(2)
	require.NoError(t, e.Workers.Start(context.Background()))
	t.Cleanup(e.Workers.Stop)
	rec := watchPR(e, "s1", nil, pr)
	_, err := e.Publisher.Publish(context.Background(), rec.ID, []sentinel.Event{
		runtimetest.Event("evt_1", "x.y.z", pr, false),
		runtimetest.Event("evt_2", "x.y.z", pr, false),
	}, "test")
	require.NoError(t, err)
	e.WaitInbox("s1", 2)
	e.Drained()
	msgs := e.InboxOf("s1")
	require.Len(t, msgs, 2)
	require.Contains(t, string(msgs[0].Data), `"id":"evt_1"`)
	require.Contains(t, string(msgs[1].Data), `"id":"evt_2"`)
	require.Equal(t, 2, e.Get(rec.ID).EventCount)
	require.GreaterOrEqual(t, f.sends.Load(), int32(4), "two lost writes, then one each")
}
