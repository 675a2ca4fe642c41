package bus_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/bus"
	"github.com/agentproto/sentinel/bus/bustest"
)

// sentinelIn returns a sentinel id whose events go to partition p of n.
func sentinelIn(p, n int) string {
	for i := 0; ; i++ {
		if sid := fmt.Sprintf("sen_%d", i); bus.Partition(sid, n) == p {
			return sid
		}
	}
}

// The race of issue 21, item 1: nats-server answers a publish before it
// counts the event as pending for the partition's consumer, so a trim
// right after a publish to a partition that looked idle must still leave
// the event for its consumer. Each cycle publishes one event, trims at
// once, then fetches the event: every one of them must arrive.
func TestTrimEventsRightAfterAPublishLosesNothing(t *testing.T) {
	t.Run("one node", func(t *testing.T) {
		env := bustest.Start(t, bustest.WithPartitions(2))
		publishTrimFetch(t, env.Bus, env.Bus, 1500)
	})
	t.Run("three nodes", func(t *testing.T) {
		envs := bustest.StartCluster(t, 3, bustest.WithPartitions(2))
		// Published and trimmed through one node, consumed through another:
		// the consumer leader's view lags further.
		publishTrimFetch(t, envs[0].Bus, envs[1].Bus, 150)
	})
}

func publishTrimFetch(t *testing.T, pub, sub *bus.Bus, cycles int) {
	t.Helper()
	ctx := context.Background()
	sid := sentinelIn(0, pub.Cfg.Partitions)
	cons, err := sub.PartitionConsumer(ctx, 0)
	require.NoError(t, err)
	lost := 0
	for i := range cycles {
		id := fmt.Sprintf("evt_%d", i)
		_, err := pub.PublishEvent(ctx, sid, id, []byte(`{"id":"`+id+`"}`))
		require.NoError(t, err)
		_, err = pub.TrimEvents(ctx)
		require.NoError(t, err)
		msg, err := cons.Next(jetstream.FetchMaxWait(2 * time.Second))
		if err != nil {
			lost++
			continue
		}
		require.Equal(t, bus.EventMsgID(sid, id), msg.Headers().Get(jetstream.MsgIDHeader), "cycle %d", i)
		require.NoError(t, msg.DoubleAck(ctx))
	}
	require.Zero(t, lost, "events purged before their consumer saw them, of %d", cycles)
}

// A publisher, the partitions' consumers and a trimmer all at once: every
// event published is delivered, whatever the trims purged meanwhile.
func TestTrimEventsUnderAConcurrentPublisherLosesNothing(t *testing.T) {
	t.Run("one node", func(t *testing.T) {
		env := bustest.Start(t, bustest.WithPartitions(4))
		concurrentTrim(t, []*bus.Bus{env.Bus}, 2000)
	})
	t.Run("three nodes", func(t *testing.T) {
		envs := bustest.StartCluster(t, 3, bustest.WithPartitions(4))
		concurrentTrim(t, []*bus.Bus{envs[0].Bus, envs[1].Bus, envs[2].Bus}, 400)
	})
}

func concurrentTrim(t *testing.T, nodes []*bus.Bus, events int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	parts := nodes[0].Cfg.Partitions
	sids := make([]string, parts)
	for p := range sids {
		sids[p] = sentinelIn(p, parts)
	}
	var mu sync.Mutex
	got := map[string]bool{}
	// One consumer loop per partition, each on the next node.
	for p := 0; p < parts; p++ {
		b := nodes[p%len(nodes)]
		cons, err := b.PartitionConsumer(ctx, p)
		require.NoError(t, err)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				msg, err := cons.Next(jetstream.FetchMaxWait(time.Second))
				if err != nil {
					continue
				}
				mu.Lock()
				got[msg.Headers().Get(jetstream.MsgIDHeader)] = true
				mu.Unlock()
				_ = msg.DoubleAck(ctx)
			}
		}()
	}
	// Trimmers on every node, as every node's workers trim.
	for _, b := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				_, _ = b.TrimEvents(ctx)
			}
		}()
	}
	want := make([]string, 0, events)
	for i := range events {
		sid, id := sids[i%parts], fmt.Sprintf("evt_%d", i)
		_, err := nodes[i%len(nodes)].PublishEvent(ctx, sid, id, []byte(`{"id":"`+id+`"}`))
		require.NoError(t, err)
		want = append(want, bus.EventMsgID(sid, id))
	}
	missing := func() []string {
		mu.Lock()
		defer mu.Unlock()
		var out []string
		for _, id := range want {
			if !got[id] {
				out = append(out, id)
			}
		}
		return out
	}
	// An event purged unseen never arrives: wait for the rest, then name
	// the missing ones.
	deadline := time.Now().Add(30 * time.Second)
	for len(missing()) > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	require.Empty(t, missing(), "events purged before their consumer saw them")
}
