package subscriptions

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus/bustest"
)

// Issue 21, item 10: the webhook dispatcher exited for good when its watch
// of the subscriptions ended by itself, and with it every delivery worker.
// Now the watch starts again, the workers are kept, and a subscription
// created after the restart gets its worker.
func TestTheWebhookDispatcherWatchesAgainWhenItsWatchEnds(t *testing.T) {
	be := bustest.Start(t)
	ctx, cancel := context.WithCancel(context.Background())
	m, err := OpenAssets(ctx, be.Bus, time.Hour)
	require.NoError(t, err)
	svc := &Service{store: NewStore(m.KV), feed: NewFeed(be.Bus, m), log: slog.New(slog.NewTextHandler(io.Discard, nil)), now: time.Now}
	w := newWebhooks(svc)
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	put := func(id string) {
		raw, err := json.Marshal(Record{ID: id, Mode: sentinel.ModeWebhook, Status: DeliveryStatus{Active: true}})
		require.NoError(t, err)
		_, err = m.KV.Put(ctx, recKey(id), raw)
		require.NoError(t, err)
	}
	put("sub_1")
	require.NoError(t, w.Start(ctx, &wg))
	bustest.Eventually(t, 10*time.Second, func() bool { return w.Running() == 1 }, "a worker for sub_1")

	w.mu.Lock()
	first := w.watcher
	w.mu.Unlock()
	require.NoError(t, first.Stop()) // the watch ends by itself
	bustest.Eventually(t, 10*time.Second, func() bool { w.mu.Lock(); defer w.mu.Unlock(); return w.watcher != first }, "watched again")
	require.Equal(t, 1, w.Running(), "the worker was kept")
	put("sub_2")
	bustest.Eventually(t, 10*time.Second, func() bool { return w.Running() == 2 }, "a worker for a subscription created after the restart")
}
