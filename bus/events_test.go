package bus_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/bus"
	"github.com/agentproto/sentinel/bus/bustest"
)

// legacyLayout creates the work-queue events stream and partition
// consumers of earlier versions, as a store written by them holds it.
func legacyLayout(t *testing.T, env *bustest.Env) jetstream.Stream {
	t.Helper()
	ctx := context.Background()
	old, err := env.Bus.JS.CreateStream(ctx, jetstream.StreamConfig{
		Name: bus.LegacyStreamEvents, Subjects: []string{"sentinel.events.*.*"}, Storage: jetstream.FileStorage,
		Retention: jetstream.WorkQueuePolicy, Duplicates: 2 * time.Minute, MaxConsumers: -1,
	})
	require.NoError(t, err)
	for p := 0; p < env.Bus.Cfg.Partitions; p++ {
		_, err := old.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: bus.ConsumerName(p),
			FilterSubject: fmt.Sprintf("sentinel.events.%d.*", p), AckPolicy: jetstream.AckExplicitPolicy, MaxAckPending: 1, MaxDeliver: -1})
		require.NoError(t, err)
	}
	return old
}

func publishLegacy(t *testing.T, env *bustest.Env, sid, eid string) {
	t.Helper()
	subj := fmt.Sprintf("sentinel.events.%d.%s", bus.Partition(sid, env.Bus.Cfg.Partitions), sid)
	_, err := env.Bus.JS.Publish(context.Background(), subj, []byte(`{"id":"`+eid+`"}`), jetstream.WithMsgID(bus.EventMsgID(sid, eid)))
	require.NoError(t, err)
}

// stored lists the events stream's messages per sentinel, in order, by
// message id.
func stored(t *testing.T, env *bustest.Env) map[string][]string {
	t.Helper()
	ctx := context.Background()
	cons, err := env.Bus.Events.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
	require.NoError(t, err)
	info, err := env.Bus.Events.Info(ctx)
	require.NoError(t, err)
	out := map[string][]string{}
	for range info.State.Msgs {
		msg, err := cons.Next(jetstream.FetchMaxWait(5 * time.Second))
		require.NoError(t, err)
		subj := msg.Subject()
		sid := subj[len(bus.EventSubject(0, "")):]
		if p := bus.Partition(sid, env.Bus.Cfg.Partitions); subj != bus.EventSubject(p, sid) {
			t.Fatalf("event on %s is not in its partition %d", subj, p)
		}
		out[sid] = append(out[sid], msg.Headers().Get(jetstream.MsgIDHeader))
	}
	return out
}

func ids(sid string, eids ...string) []string {
	out := make([]string, len(eids))
	for i, e := range eids {
		out[i] = bus.EventMsgID(sid, e)
	}
	return out
}

// A store of the work-queue layout opens on the limits layout: every event
// the old stream held (undelivered, or delivered and not acknowledged)
// moves into its partition in order, once, acknowledged ones stay gone,
// and the old stream is deleted. Opening again changes nothing.
func TestOpenMovesTheLegacyWorkQueueEvents(t *testing.T) {
	env := bustest.Start(t)
	ctx := context.Background()
	old := legacyLayout(t, env)
	for i := 1; i <= 5; i++ {
		publishLegacy(t, env, "sen_A", fmt.Sprintf("evt_a%d", i))
		publishLegacy(t, env, "sen_B", fmt.Sprintf("evt_b%d", i))
	}
	// sen_A: evt_a1 acknowledged (gone from the work queue), evt_a2 in flight.
	c, err := old.Consumer(ctx, bus.ConsumerName(bus.Partition("sen_A", env.Bus.Cfg.Partitions)))
	require.NoError(t, err)
	m, err := c.Next(jetstream.FetchMaxWait(5 * time.Second))
	require.NoError(t, err)
	require.NoError(t, m.DoubleAck(ctx))
	_, err = c.Next(jetstream.FetchMaxWait(5 * time.Second))
	require.NoError(t, err)

	b, err := bus.Open(ctx, env.Bus.NC, env.Bus.Cfg)
	require.NoError(t, err)
	_, err = env.Bus.JS.Stream(ctx, bus.LegacyStreamEvents)
	require.ErrorIs(t, err, jetstream.ErrStreamNotFound, "the legacy stream is gone")
	want := map[string][]string{
		"sen_A": ids("sen_A", "evt_a2", "evt_a3", "evt_a4", "evt_a5"),
		"sen_B": ids("sen_B", "evt_b1", "evt_b2", "evt_b3", "evt_b4", "evt_b5"),
	}
	require.Equal(t, want, stored(t, env))

	_, err = bus.Open(ctx, env.Bus.NC, env.Bus.Cfg)
	require.NoError(t, err)
	require.Equal(t, want, stored(t, env), "opening again moves nothing twice")
	dup, err := b.PublishEvent(ctx, "sen_A", "evt_a3", []byte(`{}`))
	require.NoError(t, err)
	require.True(t, dup, "a moved event keeps its message id")
}

// A move interrupted midway (some events already copied, the legacy stream
// still there) completes on the next open with every event once, in order.
func TestInterruptedMoveCompletesWithoutDuplicates(t *testing.T) {
	env := bustest.Start(t)
	ctx := context.Background()
	legacyLayout(t, env)
	for i := 1; i <= 6; i++ {
		publishLegacy(t, env, "sen_A", fmt.Sprintf("evt_%d", i))
	}
	for i := 1; i <= 3; i++ { // what the interrupted copy stored
		_, err := env.Bus.PublishEvent(ctx, "sen_A", fmt.Sprintf("evt_%d", i), []byte(`{}`))
		require.NoError(t, err)
	}
	_, err := bus.Open(ctx, env.Bus.NC, env.Bus.Cfg)
	require.NoError(t, err)
	require.Equal(t, map[string][]string{"sen_A": ids("sen_A", "evt_1", "evt_2", "evt_3", "evt_4", "evt_5", "evt_6")}, stored(t, env))
}

// TrimEvents purges, in each partition, only what that partition's
// consumer acknowledged: an event pending or in flight stays, and so does
// every event of its partition after it; another partition's acknowledged
// events go.
func TestTrimEventsPurgesOnlyAcknowledgedEvents(t *testing.T) {
	env := bustest.Start(t, bustest.WithPartitions(2))
	ctx := context.Background()
	var a, b string // one sentinel in each partition
	for i := 0; a == "" || b == ""; i++ {
		sid := fmt.Sprintf("sen_%d", i)
		if bus.Partition(sid, 2) == 0 && a == "" {
			a = sid
		} else if bus.Partition(sid, 2) == 1 && b == "" {
			b = sid
		}
	}
	purged, err := env.Bus.TrimEvents(ctx)
	require.NoError(t, err)
	require.Zero(t, purged, "an empty stream has nothing to trim")

	for i := 1; i <= 3; i++ {
		for _, sid := range []string{a, b} {
			_, err := env.Bus.PublishEvent(ctx, sid, fmt.Sprintf("evt_%d", i), []byte(`{}`))
			require.NoError(t, err)
		}
	}
	// Stream: a1 b1 a2 b2 a3 b3 (sequences 1 to 6). Partition 0 acks all of a; partition 1
	// acks b1 and holds b2 in flight.
	ack := func(p, n int, last bool) jetstream.Msg {
		c, err := env.Bus.PartitionConsumer(ctx, p)
		require.NoError(t, err)
		var m jetstream.Msg
		for i := range n {
			m, err = c.Next(jetstream.FetchMaxWait(5 * time.Second))
			require.NoError(t, err)
			if i < n-1 || last {
				require.NoError(t, m.DoubleAck(ctx))
			}
		}
		return m
	}
	ack(0, 3, true)
	inFlight := ack(1, 2, false)
	_, err = env.Bus.TrimEvents(ctx)
	require.NoError(t, err)
	require.Equal(t, map[string][]string{b: ids(b, "evt_2", "evt_3")}, stored(t, env),
		"a (all acknowledged) and b1 go; b2 (in flight) and everything after it in its partition stays")

	// Everything acknowledged: the stream empties.
	require.NoError(t, inFlight.DoubleAck(ctx))
	ack(1, 1, true)
	_, err = env.Bus.TrimEvents(ctx)
	require.NoError(t, err)
	info, err := env.Bus.Events.Info(ctx)
	require.NoError(t, err)
	require.Zero(t, info.State.Msgs)
}
