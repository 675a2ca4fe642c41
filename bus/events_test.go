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

// stored lists the events stream's messages per sentinel, in order, by
// message id.
func stored(t *testing.T, env *bustest.Env) map[string][]string {
	t.Helper()
	ctx := context.Background()
	cons, err := env.Bus.EventsStream().OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
	require.NoError(t, err)
	info, err := env.Bus.EventsStream().Info(ctx)
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
	info, err := env.Bus.EventsStream().Info(ctx)
	require.NoError(t, err)
	require.Zero(t, info.State.Msgs)
}
