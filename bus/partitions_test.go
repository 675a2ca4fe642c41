package bus_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/bus"
	"github.com/agentproto/sentinel/bus/bustest"
)

// A clustered node that counts the events stream's consumers while
// another node is still creating them waits for them instead of refusing
// to start with "the cluster runs with bus.partitions=<fewer>": nodes of
// a cluster start together.
func TestClusteredOpenWaitsForConsumersAnotherNodeIsCreating(t *testing.T) {
	envs := bustest.StartCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	a := envs[0].Bus
	// Partitions 2 and 3 of 4 not created yet: a node midway.
	for _, name := range []string{bus.ConsumerName(2), bus.ConsumerName(3)} {
		require.NoError(t, a.EventsStream().DeleteConsumer(ctx, name))
	}
	// The moment the opening node lists the consumers, the other node
	// creates the missing ones.
	listed := make(chan struct{}, 1)
	sub, err := envs[0].NC.Subscribe("$JS.API.CONSUMER.NAMES."+bus.StreamEvents, func(*nats.Msg) {
		select {
		case listed <- struct{}{}:
		default:
		}
	})
	require.NoError(t, err)
	defer sub.Unsubscribe()
	require.NoError(t, envs[0].NC.Flush())

	opened := make(chan error, 1)
	go func() {
		_, err := bus.Open(ctx, envs[1].NC, envs[1].Bus.Cfg)
		opened <- err
	}()
	select {
	case <-listed:
	case err := <-opened:
		t.Fatalf("opened without listing the consumers: %v", err)
	case <-ctx.Done():
		t.Fatal("the opening node never listed the consumers")
	}
	for _, p := range []int{2, 3} {
		_, err := a.EventsStream().CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: bus.ConsumerName(p),
			FilterSubject: bus.PartitionFilter(p), AckPolicy: jetstream.AckExplicitPolicy, MaxAckPending: 1, MaxDeliver: -1})
		require.NoError(t, err)
	}
	select {
	case err := <-opened:
		require.NoError(t, err, "the count settled at the cluster's own")
	case <-ctx.Done():
		t.Fatal("open did not finish")
	}
}
