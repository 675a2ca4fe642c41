package poll_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/fake"
	"github.com/agentproto/sentinel/runtime/runtimetest"
)

// tickRecorder is a fake provider that records the providers.Tick each
// Poll ran in.
type tickRecorder struct {
	*fake.Provider
	mu    sync.Mutex
	ticks []*providers.Tick
}

func (r *tickRecorder) Poll(ctx context.Context, h sentinel.Handle, limit int) (providers.PollResult, error) {
	r.mu.Lock()
	r.ticks = append(r.ticks, providers.TickOf(ctx))
	r.mu.Unlock()
	return r.Provider.Poll(ctx, h, limit)
}

// TestPollsOfOneTickShareATick: every Poll of a tick sees the same
// providers.Tick (local-gh shares its fetches through it) and the next
// tick a fresh one.
func TestPollsOfOneTickShareATick(t *testing.T) {
	rec := &tickRecorder{Provider: fake.New(fake.Config{Slug: "tickrec"})}
	e := runtimetest.Start(t, runtimetest.Options{Extra: []providers.Provider{rec}})
	for i := range 3 {
		e.Watch(sentinel.WatchRequest{SessionID: "s1", Subject: pr + string(rune('0'+i)), Types: []string{"*"}, Provider: "tickrec"})
	}
	ctx := context.Background()
	e.Loop.PollNow(ctx)
	e.Loop.PollNow(ctx)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	require.Len(t, rec.ticks, 6)
	for i, tk := range rec.ticks {
		require.NotNil(t, tk, "poll %d ran in a tick", i)
	}
	require.Same(t, rec.ticks[0], rec.ticks[2], "one tick for the polls of a tick")
	require.NotSame(t, rec.ticks[2], rec.ticks[3], "a fresh tick each tick")
}
