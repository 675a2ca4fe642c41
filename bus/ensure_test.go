package bus_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/bus"
	"github.com/agentproto/sentinel/bus/bustest"
)

// Open provisions the assets a composition root lists; a feature's opener
// asking for the same config afterwards costs no request, and one asking
// for another config gets it written (idempotent provisioning).
func TestOpenProvisionsTheListedAssetsAndEnsureReusesThem(t *testing.T) {
	env := bustest.Start(t)
	ctx := context.Background()
	spec := bus.StreamSpec{Config: jetstream.StreamConfig{Name: "TEST_FEATURE", Subjects: []string{"test.feature.>"}, MaxAge: time.Hour}}
	bucket := jetstream.KeyValueConfig{Bucket: "test_feature", Description: "a feature's bucket"}
	b, err := bus.Open(ctx, env.NC, env.Bus.Cfg, bus.Assets{Streams: []bus.StreamSpec{spec}, Buckets: []jetstream.KeyValueConfig{bucket}})
	require.NoError(t, err)
	_, err = env.JS.Stream(ctx, "TEST_FEATURE")
	require.NoError(t, err, "the listed stream exists")
	_, err = env.JS.KeyValue(ctx, "test_feature")
	require.NoError(t, err, "the listed bucket exists")

	var requests atomic.Int64
	sub, err := env.NC.Subscribe("$JS.API.>", func(*nats.Msg) { requests.Add(1) })
	require.NoError(t, err)
	defer sub.Unsubscribe()
	require.NoError(t, env.NC.Flush())
	_, err = b.EnsureStream(ctx, spec)
	require.NoError(t, err)
	_, err = b.EnsureKeyValue(ctx, bucket)
	require.NoError(t, err)
	require.NoError(t, env.NC.Flush())
	require.Zero(t, requests.Load(), "what Open provisioned is answered without a request")
	_, err = b.Stream(ctx, "TEST_FEATURE")
	require.NoError(t, err)
	require.NoError(t, env.NC.Flush())
	require.NotZero(t, requests.Load(), "a look-up is a request (the count sees them)")

	spec.Config.MaxAge = 2 * time.Hour
	s, err := b.EnsureStream(ctx, spec)
	require.NoError(t, err)
	info, err := s.Info(ctx)
	require.NoError(t, err)
	require.Equal(t, 2*time.Hour, info.Config.MaxAge, "another config is written")
}
