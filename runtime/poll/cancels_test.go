package poll_test

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
	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/fake"
	"github.com/agentproto/sentinel/runtime/poll"
	"github.com/agentproto/sentinel/runtime/runtimetest"
	"github.com/agentproto/sentinel/runtime/sentinels"
)

// hangingCancel is a provider whose remote never answers a cancel: Cancel
// returns only when its ctx ends.
type hangingCancel struct {
	*fake.Provider
	inFlight, maxInFlight, started atomic.Int32
}

func (h *hangingCancel) Cancel(ctx context.Context, _ sentinel.Handle) error {
	n := h.inFlight.Add(1)
	defer h.inFlight.Add(-1)
	for {
		m := h.maxInFlight.Load()
		if n <= m || h.maxInFlight.CompareAndSwap(m, n) {
			break
		}
	}
	h.started.Add(1)
	<-ctx.Done()
	return ctx.Err()
}

func TestHangingCancelsDelayNeitherPollsNorShutdown(t *testing.T) {
	hang := &hangingCancel{Provider: fake.New(fake.Config{Slug: "hang"})}
	e := runtimetest.Start(t, runtimetest.Options{Extra: []providers.Provider{hang},
		Tombstones: []sentinels.TombstonesOption{sentinels.WithTombstonesConcurrency(2)}})
	at := e.Clock.Now().Add(time.Minute).UnixMilli()
	for range 3 {
		e.Watch(sentinel.WatchRequest{SessionID: "s1", Subject: pr, Types: []string{"*"}, Provider: "hang",
			Until: &sentinel.UntilArg{Until: sentinel.Until{Kind: sentinel.UntilAt, Ms: at}}})
	}
	// Two earlier cancels that failed, awaiting their retry.
	for i := range 2 {
		h := sentinel.Handle{Provider: "hang", RemoteID: fmt.Sprintf("fake-removed-%d", i)}
		require.NoError(t, e.Expirer.Tombstones().Add(context.Background(), sentinel.NewSentinelID(), "hang", h, errors.New("HTTP 502")))
	}
	e.Watch(sentinel.WatchRequest{SessionID: "s2", Subject: pr, Types: []string{"*"}, Provider: "fake"})
	e.Clock.Advance(2 * time.Minute) // the "hang" sentinels are past until.at, the retries due

	fire := make(chan time.Time)
	loop := e.NewLoop(poll.WithAfter(func(time.Duration) <-chan time.Time { return fire }))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- loop.Run(ctx) }()

	polls := func() int { _, _, n := e.Fake.Counts(); return n }
	for tick := 1; tick <= 2; tick++ {
		before := polls()
		select {
		case fire <- time.Time{}:
		case <-time.After(5 * time.Second):
			t.Fatalf("tick %d: the loop is still busy with the previous tick", tick)
		}
		bustest.Eventually(t, 5*time.Second, func() bool { return polls() > before },
			"tick %d: the live sentinel to be polled while the cancels hang", tick)
	}
	bustest.Eventually(t, 5*time.Second, func() bool { return hang.started.Load() == 2 }, "two cancels in flight (started %d)", hang.started.Load())
	require.EqualValues(t, 2, hang.maxInFlight.Load(), "no more cancels in flight than the bound")

	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(3 * time.Second):
		t.Fatal("Run waited for the hanging cancels instead of cancelling them")
	}
	require.Zero(t, hang.inFlight.Load(), "every cancel returned before Run did")
	ts, err := e.Expirer.Tombstones().List(context.Background())
	require.NoError(t, err)
	require.Len(t, ts, 5, "the unfinished cancels stay recorded for the next start")
	attempts := 0
	for _, x := range ts {
		require.Equal(t, "hang", x.Provider)
		attempts += x.Attempts
	}
	require.Equal(t, 2, attempts, "a cancel cut short by shutdown is not counted as failed")
	for _, r := range mustList(t, e) {
		if r.Provider == "hang" {
			require.Equal(t, sentinel.StatusExpired, r.Status)
		}
	}
}

func mustList(t *testing.T, e *runtimetest.Env) []*sentinel.Sentinel {
	t.Helper()
	recs, err := e.Store.List(context.Background())
	require.NoError(t, err)
	return recs
}
