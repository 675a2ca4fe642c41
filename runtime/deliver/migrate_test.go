package deliver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/bus"
	"github.com/agentproto/sentinel/bus/bustest"
	"github.com/agentproto/sentinel/runtime/runtimetest"
)

// A node whose store still has the work-queue events stream of earlier
// versions, holding undelivered events, restarts on the limits layout:
// every event reaches the inbox once and in order, and the acknowledged
// ones are trimmed from the stream.
func TestRestartOnTheLimitsLayoutDeliversTheLegacyBacklog(t *testing.T) {
	e := runtimetest.Start(t, runtimetest.Options{NoWorkers: true})
	ctx := context.Background()
	rec := watchPR(e, "s1", nil, pr)
	b := e.Bus.Bus
	_, err := b.JS.CreateStream(ctx, jetstream.StreamConfig{Name: bus.LegacyStreamEvents, Subjects: []string{"sentinel.events.*.*"},
		Storage: jetstream.FileStorage, Retention: jetstream.WorkQueuePolicy, Duplicates: 2 * time.Minute, MaxConsumers: -1})
	require.NoError(t, err)
	const n = 8
	for i := 1; i <= n; i++ {
		ev := runtimetest.Event(fmt.Sprintf("evt_%d", i), "a.b.c", pr, false)
		raw, err := json.Marshal(ev)
		require.NoError(t, err)
		subj := fmt.Sprintf("sentinel.events.%d.%s", bus.Partition(rec.ID, b.Cfg.Partitions), rec.ID)
		_, err = b.JS.Publish(ctx, subj, raw, jetstream.WithMsgID(bus.EventMsgID(rec.ID, ev.ID)))
		require.NoError(t, err)
	}

	_, err = bus.Open(ctx, b.NC, b.Cfg) // the restart's provisioning
	require.NoError(t, err)
	require.NoError(t, e.Workers.Start(ctx))
	t.Cleanup(e.Workers.Stop)
	msgs := e.WaitInbox("s1", n)
	require.Len(t, msgs, n)
	for i, m := range msgs {
		require.Contains(t, string(m.Data), fmt.Sprintf(`"evt_%d"`, i+1), "message %d in order", i)
	}
	e.Drained()
	require.Len(t, e.InboxOf("s1"), n, "nothing twice")
	require.Equal(t, n, e.Get(rec.ID).EventCount)
	bustest.Eventually(t, 30*time.Second, func() bool {
		info, err := b.Events.Info(ctx)
		return err == nil && info.State.Msgs == 0
	}, "the delivered events are trimmed")
}
