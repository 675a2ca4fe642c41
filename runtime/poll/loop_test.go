package poll_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus/bustest"
	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/fake"
	"github.com/agentproto/sentinel/runtime/poll"
	"github.com/agentproto/sentinel/runtime/runtimetest"
)

const pr = "github:acme/widgets#7"

func TestCadenceSwitchesBetweenHotAndIdle(t *testing.T) {
	e := runtimetest.Start(t, runtimetest.Options{})
	ctx := context.Background()
	require.Equal(t, 60*time.Second, e.Loop.Interval(ctx), "no sentinel: idle")
	rec := e.Watch(sentinel.WatchRequest{SessionID: "s1", Subject: pr, Types: []string{"*"}, Provider: "fake"})
	require.Equal(t, 60*time.Second, e.Loop.Interval(ctx), "no event yet: idle")
	e.Fake.Emit(runtimetest.Event("evt_1", "a.b.c", pr, false))
	e.Loop.PollNow(ctx)
	e.Drained()
	require.Equal(t, 15*time.Second, e.Loop.Interval(ctx), "an event just now: hot")
	e.Clock.Advance(9 * time.Minute)
	require.Equal(t, 15*time.Second, e.Loop.Interval(ctx), "within the hot window")
	e.Clock.Advance(2 * time.Minute)
	require.Equal(t, 60*time.Second, e.Loop.Interval(ctx), "past the hot window: idle")
	// A sentinel that is no longer pollable does not keep the loop hot.
	_, err := e.Store.Update(ctx, rec.ID, func(r *sentinel.Sentinel) error {
		r.Status = sentinel.StatusExpired
		r.LastEventTs = e.Clock.Now().UnixMilli()
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, 60*time.Second, e.Loop.Interval(ctx))
}

func TestRunReschedulesWithInjectedClock(t *testing.T) {
	e := runtimetest.Start(t, runtimetest.Options{})
	fire := make(chan time.Time)
	intervals := make(chan time.Duration, 16)
	loop := e.NewLoop(poll.WithAfter(func(time.Duration) <-chan time.Time { return fire }), poll.WithOnInterval(func(d time.Duration) { intervals <- d }))
	e.Watch(sentinel.WatchRequest{SessionID: "s1", Subject: pr, Types: []string{"*"}, Provider: "fake"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- loop.Run(ctx) }()
	require.Equal(t, 60*time.Second, <-intervals)
	e.Fake.Emit(runtimetest.Event("evt_1", "a.b.c", pr, false))
	_, _, before := e.Fake.Counts()
	fire <- time.Time{} // the timer fires: one tick
	require.Equal(t, 15*time.Second, <-intervals, "after a delivered event the loop runs hot")
	_, _, after := e.Fake.Counts()
	require.Equal(t, before+1, after)
	e.WaitInbox("s1", 1)
	cancel()
	require.NoError(t, <-done)
}

// blockingPoller blocks in Poll until released.
type blockingPoller struct {
	*fake.Provider
	entered chan struct{}
	release chan struct{}
}

func (b *blockingPoller) Poll(ctx context.Context, h sentinel.Handle, limit int) (providers.PollResult, error) {
	b.entered <- struct{}{}
	<-b.release
	return b.Provider.Poll(ctx, h, limit)
}

func TestTickSkippedWhileOneIsInFlight(t *testing.T) {
	bp := &blockingPoller{Provider: fake.New(fake.Config{Slug: "slow"}), entered: make(chan struct{}, 1), release: make(chan struct{})}
	e := runtimetest.Start(t, runtimetest.Options{Extra: []providers.Provider{bp}})
	e.Watch(sentinel.WatchRequest{SessionID: "s1", Subject: pr, Types: []string{"*"}, Provider: "slow"})
	done := make(chan bool)
	go func() { done <- e.Loop.TryTick(context.Background()) }()
	<-bp.entered
	require.False(t, e.Loop.TryTick(context.Background()), "a second tick is skipped while one is in flight")
	close(bp.release)
	require.True(t, <-done)
}

func TestPollErrorIsRecordedAndDoesNotStopOthers(t *testing.T) {
	broken := fake.New(fake.Config{Slug: "broken"})
	broken.FailPoll(errors.New("upstream 502"))
	e := runtimetest.Start(t, runtimetest.Options{Extra: []providers.Provider{broken}})
	bad := e.Watch(sentinel.WatchRequest{SessionID: "s1", Subject: pr, Types: []string{"*"}, Provider: "broken"})
	good := e.Watch(sentinel.WatchRequest{SessionID: "s2", Subject: pr, Types: []string{"*"}, Provider: "fake"})
	e.Fake.Emit(runtimetest.Event("evt_1", "a.b.c", pr, false))
	e.Loop.PollNow(context.Background())
	e.WaitInbox("s2", 1)
	require.Contains(t, e.Get(bad.ID).LastError, "upstream 502")
	require.Equal(t, sentinel.StatusActive, e.Get(bad.ID).Status)
	require.Empty(t, e.Get(good.ID).LastError)
	broken.FailPoll(nil)
	e.Loop.PollNow(context.Background())
	require.Empty(t, e.Get(bad.ID).LastError, "a successful poll clears lastError")
}

func TestMalformedItemsAreParkedBeforeTheCursorMoves(t *testing.T) {
	e := runtimetest.Start(t, runtimetest.Options{})
	rec := e.Watch(sentinel.WatchRequest{SessionID: "s1", Subject: pr, Types: []string{"*"}, Provider: "fake"})
	e.Fake.Emit(runtimetest.Event("evt_1", "a.b.c", pr, false), sentinel.Event{}, runtimetest.Event("evt_3", "a.b.c", pr, false))
	e.Loop.PollNow(context.Background())
	e.WaitInbox("s1", 2)
	parked, err := e.Park.List(context.Background(), rec.ID, 10)
	require.NoError(t, err)
	require.Len(t, parked, 1)
	require.Contains(t, parked[0].Reason, "malformed")
	require.Equal(t, "3", e.Get(rec.ID).Handle.Cursor)
}

var _ = bustest.Eventually

func TestSoftFailureIsRecordedWhileTheCursorMoves(t *testing.T) {
	e := runtimetest.Start(t, runtimetest.Options{})
	rec := e.Watch(sentinel.WatchRequest{SessionID: "s1", Subject: pr, Types: []string{"*"}, Provider: "fake"})
	e.Fake.FailSoft("HTTP 502 from GitHub; backing off 30s")
	e.Fake.Emit(runtimetest.Event("evt_1", "a.b.c", pr, false))
	e.Loop.PollNow(context.Background())
	got := e.Get(rec.ID)
	require.Equal(t, "poll: HTTP 502 from GitHub; backing off 30s", got.LastError)
	require.Equal(t, "1", got.Handle.Cursor, "the provider's cursor (its backoff state) is persisted")
	e.Fake.FailSoft("")
	e.Loop.PollNow(context.Background())
	require.Empty(t, e.Get(rec.ID).LastError, "a healthy poll clears lastError")
}

// keysOwner owns the poll keys in owned (a node's view of its leases).
type keysOwner struct {
	mu    sync.Mutex
	owned map[string]bool
}

func (o *keysOwner) set(key string) { o.mu.Lock(); o.owned[key] = true; o.mu.Unlock() }
func (o *keysOwner) OwnsPoll(key string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.owned[key]
}
func (o *keysOwner) OwnsJob(string) bool { return false }
func (o *keysOwner) Writable() error     { return nil }

// A partition taken over is polled at once by KickKeys, and only its
// sentinels: the others wait for their tick, which the kick does not move.
func TestKickKeysPollsATakenOverPartitionAtOnceAndNothingElse(t *testing.T) {
	e := runtimetest.Start(t, runtimetest.Options{})
	fire := make(chan time.Time)
	intervals := make(chan time.Duration, 16)
	own := &keysOwner{owned: map[string]bool{"github:acme/kept": true}}
	loop := e.NewLoop(poll.WithAfter(func(time.Duration) <-chan time.Time { return fire }), poll.WithOnInterval(func(d time.Duration) { intervals <- d }), poll.WithOwnership(own))
	e.Watch(sentinel.WatchRequest{SessionID: "s1", Subject: "github:acme/kept#1", Types: []string{"*"}, Provider: "fake"})
	e.Watch(sentinel.WatchRequest{SessionID: "s1", Subject: "github:acme/taken#2", Types: []string{"*"}, Provider: "fake"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- loop.Run(ctx) }()
	<-intervals
	e.Fake.Emit(runtimetest.Event("evt_kept", "a.b.c", "github:acme/kept#1", false), runtimetest.Event("evt_taken", "a.b.c", "github:acme/taken#2", false))

	own.set("github:acme/taken")
	loop.KickKeys(func(key string) bool { return key == "github:acme/taken" })
	msgs := e.WaitInbox("s1", 1)
	require.Len(t, msgs, 1)
	require.Contains(t, string(msgs[0].Data), "evt_taken")
	select {
	case d := <-intervals:
		t.Fatalf("the kick rescheduled the tick (%s)", d)
	default:
	}

	fire <- time.Time{} // the tick: the kept sentinel's turn
	msgs = e.WaitInbox("s1", 2)
	require.Contains(t, string(msgs[1].Data), "evt_kept")
	cancel()
	require.NoError(t, <-done)
}
