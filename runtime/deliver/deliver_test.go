package deliver_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus/bustest"
	"github.com/agentproto/sentinel/runtime/deliver"
	"github.com/agentproto/sentinel/runtime/inbox"
	"github.com/agentproto/sentinel/runtime/runtimetest"
)

const pr = "github:acme/widgets#7"

func watchPR(e *runtimetest.Env, session string, until *sentinel.UntilArg, subjects ...string) *sentinel.Sentinel {
	req := sentinel.WatchRequest{SessionID: session, Types: []string{"*"}, Provider: "fake", Until: until}
	if len(subjects) == 1 {
		req.Subject = subjects[0]
	} else {
		for _, s := range subjects {
			req.Match = append(req.Match, sentinel.Clause{Subject: s, Types: []string{"*"}})
		}
		req.Types = nil
	}
	return e.Watch(req)
}

func TestDeliversAsSystemNoticeWithCorrelation(t *testing.T) {
	e := runtimetest.Start(t, runtimetest.Options{})
	rec := watchPR(e, "s1", nil, pr)
	e.Fake.Emit(runtimetest.Event("evt_1", "github.check_suite.completed", pr, false))
	e.Loop.PollNow(context.Background())
	msgs := e.WaitInbox("s1", 1)
	m := msgs[0]
	require.Equal(t, "s1", m.To)
	require.Equal(t, inbox.RelationSystem, m.From.Relation)
	require.Equal(t, inbox.KindNotice, m.Kind)
	require.Equal(t, sentinel.UrgencyNextTurn, m.Urgency)
	require.Equal(t, "sentinel:"+pr, m.CorrelationID)
	require.Equal(t, "[github] github.check_suite.completed on "+pr, m.Text)
	require.Contains(t, string(m.Data), `"id":"evt_1"`)
	e.Drained()
	got := e.Get(rec.ID)
	require.Equal(t, 1, got.EventCount)
	require.NotZero(t, got.LastEventTs)
	require.Equal(t, "1", got.Handle.Cursor)
	require.Equal(t, []string{"1"}, e.Fake.Acks())
}

func TestOrderPerSentinelAcrossPartitions(t *testing.T) {
	e := runtimetest.Start(t, runtimetest.Options{Partitions: 3})
	const sentinels, events = 6, 30
	var recs []*sentinel.Sentinel
	for i := 0; i < sentinels; i++ {
		recs = append(recs, watchPR(e, fmt.Sprintf("s%d", i), nil, fmt.Sprintf("github:acme/r%d#1", i)))
	}
	for n := 0; n < events; n++ {
		for i := 0; i < sentinels; i++ {
			e.Fake.Emit(runtimetest.Event(fmt.Sprintf("evt_%d_%d", i, n), "x.y.z", fmt.Sprintf("github:acme/r%d#1", i), false))
		}
	}
	e.Loop.PollNow(context.Background()) // 50 per sentinel per tick: all 30 in one tick
	for i := range recs {
		msgs := e.WaitInbox(fmt.Sprintf("s%d", i), events)
		require.Len(t, msgs, events)
		for n, m := range msgs {
			require.Contains(t, string(m.Data), fmt.Sprintf(`"id":"evt_%d_%d"`, i, n), "sentinel %d message %d out of order", i, n)
		}
	}
}

func TestRepollDeliversNothingTwice(t *testing.T) {
	e := runtimetest.Start(t, runtimetest.Options{})
	rec := watchPR(e, "s1", nil, pr)
	e.Fake.Emit(runtimetest.Event("evt_1", "a.b.c", pr, false), runtimetest.Event("evt_2", "a.b.c", pr, false))
	e.Loop.PollNow(context.Background())
	e.WaitInbox("s1", 2)
	e.Drained()
	// Rewind the provider cursor: the provider re-serves both events.
	_, err := e.Store.Update(context.Background(), rec.ID, func(r *sentinel.Sentinel) error { r.Handle.Cursor = "0"; return nil })
	require.NoError(t, err)
	e.Loop.PollNow(context.Background())
	e.Drained()
	require.Len(t, e.InboxOf("s1"), 2)
	require.Equal(t, 2, e.Get(rec.ID).EventCount)
}

// flakyRouter fails the first n deliveries.
type flakyRouter struct {
	inner deliver.Router
	fails atomic.Int32
	calls atomic.Int32
}

func (f *flakyRouter) Route(ctx context.Context, rec *sentinel.Sentinel, ev *sentinel.Event) (deliver.Outcome, error) {
	f.calls.Add(1)
	if f.fails.Add(-1) >= 0 {
		return deliver.Outcome{}, errors.New("inbox unavailable")
	}
	return f.inner.Route(ctx, rec, ev)
}

func TestFailingDeliveryIsRetriedThenDeliveredOnce(t *testing.T) {
	fr := &flakyRouter{}
	fr.fails.Store(3)
	e := runtimetest.Start(t, runtimetest.Options{Router: fr, NoWorkers: true})
	fr.inner = deliver.NewDirectRouter(e.Inbox, deliver.WithDirectRouterClock(func() time.Time { return time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC) }))
	require.NoError(t, e.Workers.Start(context.Background()))
	t.Cleanup(e.Workers.Stop)
	rec := watchPR(e, "s1", nil, pr)
	e.Fake.Emit(runtimetest.Event("evt_1", "a.b.c", pr, false))
	e.Loop.PollNow(context.Background())
	e.WaitInbox("s1", 1)
	e.Drained()
	require.Len(t, e.InboxOf("s1"), 1)
	require.EqualValues(t, 4, fr.calls.Load())
	require.Equal(t, 1, e.Get(rec.ID).EventCount)
}

func TestPostMortemParkingAndReopen(t *testing.T) {
	e := runtimetest.Start(t, runtimetest.Options{})
	rec := watchPR(e, "s1", &sentinel.UntilArg{Until: sentinel.Until{Kind: sentinel.UntilNever}}, pr)
	e.Fake.Emit(
		runtimetest.Event("evt_close", "github.pull_request.closed", pr, true),
		runtimetest.Event("evt_late_ci", "github.check_suite.completed", pr, false),
	)
	e.Loop.PollNow(context.Background())
	e.Drained()
	msgs := e.InboxOf("s1")
	require.Len(t, msgs, 1, "post-merge noise must not be delivered")
	require.Contains(t, msgs[0].Text, "closed")
	parked, err := e.Park.List(context.Background(), rec.ID, 10)
	require.NoError(t, err)
	require.Len(t, parked, 1)
	require.Equal(t, "evt_late_ci", parked[0].Event.ID)
	require.Contains(t, parked[0].Reason, "already closed")
	require.Equal(t, []string{pr}, e.Get(rec.ID).ClosedSubjects)

	e.Fake.Emit(
		runtimetest.Event("evt_reopen", "github.pull_request.reopened", pr, false),
		runtimetest.Event("evt_ci2", "github.check_suite.completed", pr, false),
	)
	e.Loop.PollNow(context.Background())
	e.Drained()
	require.Len(t, e.InboxOf("s1"), 3)
	require.Empty(t, e.Get(rec.ID).ClosedSubjects)
	require.Equal(t, sentinel.StatusActive, e.Get(rec.ID).Status)
}

func TestMultiClauseSubjectTerminal(t *testing.T) {
	e := runtimetest.Start(t, runtimetest.Options{})
	a, b := "github:acme/widgets#1", "github:acme/widgets#2"
	rec := watchPR(e, "s1", &sentinel.UntilArg{Until: sentinel.Until{Kind: sentinel.UntilSubjectTerminal}}, a, b)
	e.Fake.Emit(runtimetest.Event("evt_a", "github.pull_request.closed", a, true))
	e.Loop.PollNow(context.Background())
	e.Drained()
	got := e.Get(rec.ID)
	require.Equal(t, sentinel.StatusActive, got.Status)
	require.Equal(t, []string{a}, got.TerminalSubjects)
	e.Fake.Emit(runtimetest.Event("evt_b", "github.pull_request.closed", b, true))
	e.Loop.PollNow(context.Background())
	e.Drained()
	got = e.Get(rec.ID)
	require.Equal(t, sentinel.StatusExpired, got.Status)
	require.ElementsMatch(t, []string{a, b}, got.TerminalSubjects)
	require.Contains(t, e.Fake.Cancels(), rec.Handle.RemoteID)
}

func TestUntilCountExpiresAndStopsFetching(t *testing.T) {
	e := runtimetest.Start(t, runtimetest.Options{})
	rec := watchPR(e, "s1", &sentinel.UntilArg{Until: sentinel.Until{Kind: sentinel.UntilCount, N: 2}}, pr)
	for i := 1; i <= 4; i++ {
		e.Fake.Emit(runtimetest.Event(fmt.Sprintf("evt_%d", i), "a.b.c", pr, false))
	}
	e.Loop.PollNow(context.Background())
	e.Drained()
	require.Len(t, e.InboxOf("s1"), 2)
	got := e.Get(rec.ID)
	require.Equal(t, sentinel.StatusExpired, got.Status)
	require.Equal(t, 2, got.EventCount)
	_, _, polls := e.Fake.Counts()
	e.Loop.PollNow(context.Background())
	_, _, polls2 := e.Fake.Counts()
	require.Equal(t, polls, polls2, "an expired sentinel is not polled")
}

func TestUntilAtExpiresIdleSentinel(t *testing.T) {
	e := runtimetest.Start(t, runtimetest.Options{})
	at := e.Clock.Now().Add(time.Hour).UnixMilli()
	rec := watchPR(e, "s1", &sentinel.UntilArg{Until: sentinel.Until{Kind: sentinel.UntilAt, Ms: at}}, pr)
	e.Loop.PollNow(context.Background())
	require.Equal(t, sentinel.StatusActive, e.Get(rec.ID).Status)
	e.Clock.Advance(time.Hour)
	e.Loop.PollNow(context.Background()) // the sweep runs every tick
	require.Equal(t, sentinel.StatusExpired, e.Get(rec.ID).Status)
	require.Contains(t, e.Fake.Cancels(), rec.Handle.RemoteID)
}

func TestUntilAtGatesAnEventInFlight(t *testing.T) {
	e := runtimetest.Start(t, runtimetest.Options{NoWorkers: true})
	at := e.Clock.Now().Add(time.Minute).UnixMilli()
	rec := watchPR(e, "s1", &sentinel.UntilArg{Until: sentinel.Until{Kind: sentinel.UntilAt, Ms: at}}, pr)
	e.Fake.Emit(runtimetest.Event("evt_1", "a.b.c", pr, false))
	e.Loop.PollNow(context.Background()) // published, not yet delivered
	e.Clock.Advance(2 * time.Minute)
	require.NoError(t, e.Workers.Start(context.Background()))
	t.Cleanup(e.Workers.Stop)
	e.Drained()
	require.Empty(t, e.InboxOf("s1"))
	require.Equal(t, sentinel.StatusExpired, e.Get(rec.ID).Status)
}

func TestFilteredEventsAreMarkedSeenNotDelivered(t *testing.T) {
	e := runtimetest.Start(t, runtimetest.Options{})
	rec := e.Watch(sentinel.WatchRequest{SessionID: "s1", Subject: pr, Types: []string{"github.pull_request.*"}, Provider: "fake"})
	e.Fake.Emit(runtimetest.Event("evt_ci", "github.check_suite.completed", pr, false), runtimetest.Event("evt_sync", "github.pull_request.synchronize", pr, false))
	e.Loop.PollNow(context.Background())
	e.Drained()
	msgs := e.InboxOf("s1")
	require.Len(t, msgs, 1)
	require.Contains(t, string(msgs[0].Data), "evt_sync")
	require.True(t, e.Get(rec.ID).HasSeen("evt_ci"), "a filtered event is marked seen")
}

func TestConcurrentPushesDeliverOnce(t *testing.T) {
	e := runtimetest.Start(t, runtimetest.Options{})
	rec := watchPR(e, "s1", nil, pr)
	ev := runtimetest.Event("evt_push", "a.b.c", pr, false)
	errs := make(chan error, 20)
	for i := 0; i < 20; i++ {
		go func() {
			_, err := e.Service.DeliverPushed(context.Background(), rec.ID, []sentinel.Event{ev})
			errs <- err
		}()
	}
	for i := 0; i < 20; i++ {
		require.NoError(t, <-errs)
	}
	e.WaitInbox("s1", 1)
	e.Drained()
	require.Len(t, e.InboxOf("s1"), 1)
}

func TestRedeliveryAfterInboxWriteIsCountedOnce(t *testing.T) {
	// Simulates a crash after the inbox write but before the record update
	// (which holds the seen mark and the counters): the same event is
	// handled again, must not show twice and must be counted exactly once.
	e := runtimetest.Start(t, runtimetest.Options{NoWorkers: true})
	rec := watchPR(e, "s1", nil, pr)
	ev := runtimetest.Event("evt_1", "a.b.c", pr, false)
	ctx := context.Background()
	router := deliver.NewDirectRouter(e.Inbox, deliver.WithDirectRouterClock(func() time.Time { return time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC) }))
	_, err := router.Route(ctx, e.Get(rec.ID), &ev) // the write that happened before the crash
	require.NoError(t, err)
	res, err := e.Pipeline.Handle(ctx, rec.ID, &ev)
	require.NoError(t, err)
	require.Equal(t, deliver.ResultDuplicate, res)
	require.Len(t, e.InboxOf("s1"), 1)
	require.Equal(t, 1, e.Get(rec.ID).EventCount)
	// And a later re-serve of the same event is dropped by the seen window.
	res, err = e.Pipeline.Handle(ctx, rec.ID, &ev)
	require.NoError(t, err)
	require.Equal(t, deliver.ResultDuplicate, res)
	require.Equal(t, 1, e.Get(rec.ID).EventCount)
}

func TestRemovedSentinelStopsDelivery(t *testing.T) {
	e := runtimetest.Start(t, runtimetest.Options{NoWorkers: true})
	rec := watchPR(e, "s1", nil, pr)
	ev := runtimetest.Event("evt_1", "a.b.c", pr, false)
	require.NoError(t, e.Service.Remove(context.Background(), rec.ID))
	res, err := e.Pipeline.Handle(context.Background(), rec.ID, &ev)
	require.NoError(t, err)
	require.Equal(t, deliver.ResultStopped, res)
	require.Empty(t, e.InboxOf("s1"))
}

var _ = bustest.Eventually
