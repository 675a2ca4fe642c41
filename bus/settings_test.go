package bus_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/bus"
	"github.com/agentproto/sentinel/bus/bustest"
)

// Issue 21, item 6: the last node to start rewrote the consumers' ack wait
// and the leases and nodes buckets' ages while every node kept timing its
// work by its own values, and on one server (external mode, or replicas
// 1) a node with fewer partitions deleted consumers others pulled from.
// A node that may have peers (Shared) is now refused on any difference,
// with a named error, before it rewrites anything.
func TestANodeWithOtherSharedSettingsIsRefusedBeforeItRewritesAnything(t *testing.T) {
	env := bustest.Start(t, bustest.WithPartitions(4))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	first := env.Bus.Cfg
	first.Shared = true
	// A bucket whose age is a shared setting, as the leases bucket's is.
	leases := func(c bus.Config) bus.Assets {
		return bus.Assets{Buckets: []jetstream.KeyValueConfig{{Bucket: "test_leases", TTL: c.LeaseTTL}}}
	}
	_, err := bus.Open(ctx, env.NC, first, leases(first))
	require.NoError(t, err, "the same settings are accepted")

	other := first
	other.AckWait, other.LeaseTTL = 5*time.Second, 30*time.Second
	_, err = bus.Open(ctx, env.NC, other, leases(other))
	require.ErrorIs(t, err, bus.ErrSettingsMismatch)
	require.ErrorContains(t, err, "bus.ack_wait: the service runs with 10s, this node is configured with 5s")
	require.ErrorContains(t, err, "bus.lease_ttl: the service runs with 10s, this node is configured with 30s")

	fewer := first
	fewer.Partitions = 2
	_, err = bus.Open(ctx, env.NC, fewer, leases(fewer))
	require.ErrorIs(t, err, bus.ErrSettingsMismatch)
	require.ErrorContains(t, err, "bus.partitions")

	// Nothing was rewritten by the refused nodes.
	kv, err := env.Bus.KeyValue(ctx, "test_leases")
	require.NoError(t, err)
	st, err := kv.Status(ctx)
	require.NoError(t, err)
	require.Equal(t, 10*time.Second, st.TTL())
	for p := range 4 {
		c, err := env.Bus.PartitionConsumer(ctx, p)
		require.NoError(t, err, "consumer %d kept", p)
		require.Equal(t, 10*time.Second, c.CachedInfo().Config.AckWait)
	}
}

// A single embedded node (no peer can share its JetStream) takes new
// settings at its next start, as before.
func TestASingleNodeRepinsItsSettings(t *testing.T) {
	env := bustest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cfg := env.Bus.Cfg
	cfg.AckWait = 4 * time.Second
	b, err := bus.Open(ctx, env.NC, cfg)
	require.NoError(t, err)
	c, err := b.PartitionConsumer(ctx, 0)
	require.NoError(t, err)
	require.Equal(t, 4*time.Second, c.CachedInfo().Config.AckWait)
	cfg.Shared = true
	_, err = bus.Open(ctx, env.NC, cfg)
	require.NoError(t, err, "the new settings are the pinned ones now")
}
