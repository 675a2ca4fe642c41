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

// TestSeenBucketAllowsKeyTTLsAlsoAfterAnUpgrade checks that the seen
// bucket accepts keys with a TTL, including a bucket provisioned before
// the bucket had per-key TTLs (re-provisioning turns them on).
func TestSeenBucketAllowsKeyTTLsAlsoAfterAnUpgrade(t *testing.T) {
	env := bustest.Start(t)
	ctx := context.Background()
	// The bucket as an older version provisioned it: no limit markers.
	require.NoError(t, env.Bus.JS.DeleteKeyValue(ctx, bus.BucketSeen))
	_, err := env.Bus.JS.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: bus.BucketSeen, Storage: jetstream.FileStorage})
	require.NoError(t, err)

	b, err := bus.Open(ctx, env.Bus.NC, env.Bus.Cfg)
	require.NoError(t, err)
	st, err := b.Seen.Status(ctx)
	require.NoError(t, err)
	require.Equal(t, bus.SeenMarkerTTL, st.LimitMarkerTTL())

	_, err = b.Seen.Create(ctx, "sen_a.k1", []byte("x"), jetstream.KeyTTL(time.Second))
	require.NoError(t, err)
	bustest.Eventually(t, 10*time.Second, func() bool {
		_, err := b.Seen.Get(ctx, "sen_a.k1")
		return err != nil
	}, "a key with a TTL expires")
}
