package sentinels_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus/bustest"
	"github.com/agentproto/sentinel/runtime/sentinels"
)

// Shared lists as List does, without copies, and a write after the listing
// replaces the mirror's record instead of changing the one listed.
func TestSharedListsInOrderAndKeepsWhatItListed(t *testing.T) {
	env := bustest.Start(t)
	ctx := context.Background()
	st := sentinels.NewStore(env.KeyValue(t, sentinels.RecordsBucket()))
	for i := 3; i >= 1; i-- {
		require.NoError(t, st.Create(ctx, &sentinel.Sentinel{ID: sentinel.NewSentinelID(), CreatedTs: int64(i),
			Handle: sentinel.Handle{Cursor: "0", State: map[string]any{"k": "v"}}}))
	}
	without, err := st.Shared(ctx)
	require.NoError(t, err)
	require.Len(t, without, 3, "without a mirror: the bucket's records")

	require.NoError(t, st.StartCache(ctx))
	defer st.StopCache()
	shared, err := st.Shared(ctx)
	require.NoError(t, err)
	list, err := st.List(ctx)
	require.NoError(t, err)
	require.Equal(t, list, shared, "the same records, oldest first")
	again, err := st.Shared(ctx)
	require.NoError(t, err)
	require.Same(t, shared[0], again[0], "the mirror's own records, not copies")

	_, err = st.Update(ctx, shared[0].ID, func(r *sentinel.Sentinel) error {
		r.Handle.Cursor = "1"
		r.Handle.State["k"] = "w"
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, "0", shared[0].Handle.Cursor, "a write replaces the record whole")
	require.Equal(t, "v", shared[0].Handle.State["k"])
	now, err := st.Shared(ctx)
	require.NoError(t, err)
	require.Equal(t, "1", now[0].Handle.Cursor)

	h := sentinels.HandleCopy(now[0].Handle)
	h.State["k"] = "x"
	require.Equal(t, "w", now[0].Handle.State["k"], "a handle copy has its own State")
}
