package sentinels

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
)

// Misses that arrive while a catch-up runs share the next one: however
// many, the gate runs twice (the one in flight, then one that started
// after all of them arrived), and every caller gets that second result.
func TestCatchUpGateSharesRunsThatStartAfterTheCall(t *testing.T) {
	var g catchUpGate
	var runs atomic.Int32
	hold := make(chan struct{})
	run := func(context.Context) ([]*sentinel.Sentinel, error) {
		n := runs.Add(1)
		if n == 1 {
			<-hold // the named pause point: the first run is in flight
		}
		return []*sentinel.Sentinel{{ID: "run" + string(rune('0'+n))}}, nil
	}
	ctx := context.Background()
	first := make(chan string, 1)
	go func() {
		recs, err := g.Do(ctx, run)
		require.NoError(t, err)
		first <- recs[0].ID
	}()
	require.Eventually(t, func() bool { return runs.Load() == 1 }, 5*time.Second, time.Millisecond)
	const n = 20
	var wg sync.WaitGroup
	got := make([]string, n)
	for i := range n {
		wg.Go(func() {
			recs, err := g.Do(ctx, run)
			require.NoError(t, err)
			got[i] = recs[0].ID
		})
	}
	require.Eventually(t, func() bool { return g.waiters() == n }, 5*time.Second, time.Millisecond)
	close(hold)
	wg.Wait()
	require.Equal(t, "run1", <-first)
	for _, id := range got {
		require.Equal(t, "run2", id, "a run that started after the call")
	}
	require.Equal(t, int32(2), runs.Load())
}

// Past hookMissWaiters waiting callers a miss answers unavailable at
// once instead of queueing.
func TestCatchUpGateBoundsItsWaiters(t *testing.T) {
	var g catchUpGate
	hold := make(chan struct{})
	var once sync.Once
	run := func(context.Context) ([]*sentinel.Sentinel, error) {
		once.Do(func() { <-hold })
		return nil, nil
	}
	ctx := context.Background()
	var wg sync.WaitGroup
	wg.Go(func() { _, _ = g.Do(ctx, run) })
	for range hookMissWaiters {
		wg.Go(func() { _, _ = g.Do(ctx, run) })
	}
	require.Eventually(t, func() bool { return g.waiters() == hookMissWaiters }, 5*time.Second, time.Millisecond)
	_, err := g.Do(ctx, run)
	require.ErrorIs(t, err, &sentinel.Error{Code: sentinel.CodeUnavailable})
	close(hold)
	wg.Wait()
}
