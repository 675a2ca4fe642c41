package sentinels_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus/bustest"
	"github.com/agentproto/sentinel/runtime/sentinels"
)

// TestSeenKeysExpireByThemselves: a kept digest carries a TTL, so the
// bucket forgets it without any prune (the window used to grow forever
// for sentinels whose marks never hit the prune path).
func TestSeenKeysExpireByThemselves(t *testing.T) {
	env := bustest.Start(t)
	ctx := context.Background()
	seen := sentinels.NewSeen(env.KeyValue(t, sentinels.SeenBucket())).WithTTL(time.Second)
	require.NoError(t, seen.Mark(ctx, "sen_a", "evt_1"))
	require.NoError(t, seen.Mark(ctx, "sen_a", "evt_1"), "keeping is idempotent")
	has, err := seen.Has(ctx, "sen_a", "evt_1")
	require.NoError(t, err)
	require.True(t, has)
	bustest.Eventually(t, 10*time.Second, func() bool {
		has, err := seen.Has(ctx, "sen_a", "evt_1")
		return err == nil && !has
	}, "the kept id to expire")
	// An expired id can be kept again.
	require.NoError(t, seen.Mark(ctx, "sen_a", "evt_1"))
	has, _ = seen.Has(ctx, "sen_a", "evt_1")
	require.True(t, has)
}

func TestSeenKeepsWithTheDefaultWindowTTL(t *testing.T) {
	env := bustest.Start(t)
	ctx := context.Background()
	seen := sentinels.NewSeen(env.KeyValue(t, sentinels.SeenBucket()))
	require.NoError(t, seen.Mark(ctx, "sen_a", "evt_1"))
	require.Equal(t, sentinels.SeenMinAge.String(), keyTTL(t, env, "sen_a."+sentinel.SeenDigest("evt_1")))
}

// keyTTL returns the Nats-TTL header of a seen key's latest message.
func keyTTL(t *testing.T, env *bustest.Env, key string) string {
	t.Helper()
	ctx := context.Background()
	s, err := env.JS.Stream(ctx, "KV_"+sentinels.BucketSeen)
	require.NoError(t, err)
	m, err := s.GetLastMsgForSubject(ctx, "$KV."+sentinels.BucketSeen+"."+key)
	require.NoError(t, err)
	ttl, err := time.ParseDuration(m.Header.Get(jetstream.MsgTTLHeader))
	require.NoError(t, err, "header %q", m.Header.Get(jetstream.MsgTTLHeader))
	return ttl.String()
}
