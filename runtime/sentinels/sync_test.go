package sentinels_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus/bustest"
	"github.com/agentproto/sentinel/runtime/sentinels"
)

// After SyncMirror, a node's mirror holds every record another node wrote
// before the call: push ingress matches hook keys against it, so a
// sentinel created elsewhere a moment ago is not missed.
func TestSyncMirrorCatchesUpWithOtherNodesWrites(t *testing.T) {
	env := bustest.Start(t)
	ctx := context.Background()
	a := sentinels.NewStore(env.KeyValue(t, sentinels.RecordsBucket()))
	require.NoError(t, a.StartCache(ctx))
	defer a.StopCache()
	b := sentinels.NewStore(env.KeyValue(t, sentinels.RecordsBucket()))
	for i := 0; i < 50; i++ {
		id := sentinel.NewSentinelID()
		require.NoError(t, b.Create(ctx, &sentinel.Sentinel{ID: id, Status: sentinel.StatusActive}))
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		require.NoError(t, a.SyncMirror(sctx))
		cancel()
		rec, _, err := a.Peek(ctx, id)
		require.NoError(t, err)
		require.Equal(t, id, rec.ID)
		recs, err := a.List(ctx)
		require.NoError(t, err)
		require.Len(t, recs, i+1, "write %d is in the mirror", i)
	}
}
