package sentinels_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/bus"
	"github.com/agentproto/sentinel/bus/bustest"
	"github.com/agentproto/sentinel/runtime/sentinels"
)

// TestSeenBucketAllowsKeyTTLsAlsoAfterAnUpgrade checks that the seen
// bucket accepts keys with a TTL, including a bucket provisioned before
// the bucket had per-key TTLs (re-provisioning turns them on).
func TestSeenBucketAllowsKeyTTLsAlsoAfterAnUpgrade(t *testing.T) {
	env := bustest.Start(t)
	ctx := context.Background()
	// The bucket as an older version provisioned it: no limit markers.
	_, err := env.JS.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: sentinels.BucketSeen, Storage: jetstream.FileStorage})
	require.NoError(t, err)

	b, err := bus.Open(ctx, env.NC, env.Bus.Cfg, sentinels.Assets())
	require.NoError(t, err)
	seen, err := b.EnsureKeyValue(ctx, sentinels.SeenBucket())
	require.NoError(t, err)
	st, err := seen.Status(ctx)
	require.NoError(t, err)
	require.Equal(t, sentinels.SeenMarkerTTL, st.LimitMarkerTTL())

	_, err = seen.Create(ctx, "sen_a.k1", []byte("x"), jetstream.KeyTTL(time.Second))
	require.NoError(t, err)
	bustest.Eventually(t, 10*time.Second, func() bool {
		_, err := seen.Get(ctx, "sen_a.k1")
		return err != nil
	}, "a key with a TTL expires")
}
