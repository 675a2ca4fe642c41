package bus_test

import (
	"context"
	"fmt"
	"sort"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/bus"
	"github.com/agentproto/sentinel/bus/bustest"
)

// DirectKeys lists what ListKeys lists without a consumer: every live key,
// across more than one batch, without the deleted and purged ones and
// with a rewritten key once.
func TestDirectKeysListsTheLiveKeysWithoutAConsumer(t *testing.T) {
	env := bustest.Start(t)
	ctx := context.Background()
	kv := env.KeyValue(t, jetstream.KeyValueConfig{Bucket: "test_keys"})
	var want []string
	for i := 0; i < 600; i++ { // more than two batches
		k := fmt.Sprintf("s-%03d", i)
		_, err := kv.Put(ctx, k, []byte("{}"))
		require.NoError(t, err)
		want = append(want, k)
	}
	_, err := kv.Put(ctx, "s-000", []byte(`{"again":true}`))
	require.NoError(t, err)
	require.NoError(t, kv.Delete(ctx, "s-001"))
	require.NoError(t, kv.Purge(ctx, "s-002"))
	want = want[3:]
	want = append(want, "s-000")
	sort.Strings(want)

	got, err := bus.DirectKeys(ctx, env.NC, kv.Bucket())
	require.NoError(t, err)
	require.Equal(t, want, got)
	listed, err := env.Bus.ListKeys(ctx, kv)
	require.NoError(t, err)
	require.Equal(t, want, listed, "ListKeys agrees")

	env.KeyValue(t, jetstream.KeyValueConfig{Bucket: "test_empty"})
	empty, err := bus.DirectKeys(ctx, env.NC, "test_empty")
	require.NoError(t, err)
	require.Empty(t, empty, "an empty bucket lists nothing")
}
