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

func TestMirrorForgetsDeletedRecords(t *testing.T) {
	env := bustest.Start(t)
	ctx := context.Background()
	st := sentinels.NewStore(env.KeyValue(t, sentinels.RecordsBucket()))
	require.NoError(t, st.StartCache(ctx))
	t.Cleanup(st.StopCache)
	other := sentinels.NewStore(env.KeyValue(t, sentinels.RecordsBucket())) // another node, writing the same bucket

	for cycle := range 3 {
		for i := range 10 {
			writer := st
			if i%2 == 1 {
				writer = other
			}
			id := sentinel.NewSentinelID()
			require.NoError(t, writer.Create(ctx, &sentinel.Sentinel{ID: id, Status: sentinel.StatusActive}))
			_, err := writer.Update(ctx, id, func(r *sentinel.Sentinel) error { r.EventCount++; return nil })
			require.NoError(t, err)
			require.NoError(t, writer.Delete(ctx, id))
		}
		bustest.Eventually(t, 10*time.Second, func() bool {
			recs, known, gone := st.MirrorSizes()
			return recs == 0 && known == 0 && gone == 10*(cycle+1)
		}, "cycle %d: the mirror to forget every deleted record", cycle)
		recs, err := st.List(ctx)
		require.NoError(t, err)
		require.Empty(t, recs, "no deleted record comes back")
	}

	// A mirror started over a bucket full of delete markers keeps none.
	fresh := sentinels.NewStore(env.KeyValue(t, sentinels.RecordsBucket()))
	require.NoError(t, fresh.StartCache(ctx))
	t.Cleanup(fresh.StopCache)
	recs, known, gone := fresh.MirrorSizes()
	require.Zero(t, recs)
	require.Zero(t, known)
	require.LessOrEqual(t, gone, sentinels.GoneCap)
}

func TestMirrorRemembersABoundedNumberOfDeletes(t *testing.T) {
	env := bustest.Start(t)
	ctx := context.Background()
	st := sentinels.NewStore(env.KeyValue(t, sentinels.RecordsBucket()))
	require.NoError(t, st.StartCache(ctx))
	t.Cleanup(st.StopCache)
	n := sentinels.GoneCap + 50
	for range n {
		id := sentinel.NewSentinelID()
		require.NoError(t, st.Create(ctx, &sentinel.Sentinel{ID: id, Status: sentinel.StatusActive}))
		require.NoError(t, st.Delete(ctx, id))
	}
	bustest.Eventually(t, 20*time.Second, func() bool {
		recs, known, gone := st.MirrorSizes()
		return recs == 0 && known == 0 && gone == sentinels.GoneCap
	}, "the mirror to keep only the last %d deletes", sentinels.GoneCap)
}
