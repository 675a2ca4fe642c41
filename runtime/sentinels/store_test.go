package sentinels_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus/bustest"
	"github.com/agentproto/sentinel/runtime/sentinels"
)

func TestStoreCompareAndSetUnderContention(t *testing.T) {
	env := bustest.Start(t)
	st := sentinels.NewStore(env.KeyValue(t, sentinels.RecordsBucket()))
	ctx := context.Background()
	id := sentinel.NewSentinelID()
	require.NoError(t, st.Create(ctx, &sentinel.Sentinel{ID: id, Status: sentinel.StatusActive}))
	require.ErrorIs(t, st.Create(ctx, &sentinel.Sentinel{ID: id}), sentinel.ErrConflict)
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 10; i++ {
				_, err := st.Update(ctx, id, func(r *sentinel.Sentinel) error { r.EventCount++; return nil })
				require.NoError(t, err)
			}
		}()
	}
	wg.Wait()
	rec, _, err := st.Get(ctx, id)
	require.NoError(t, err)
	require.Equal(t, 80, rec.EventCount, "no lost update")
	require.NotNil(t, rec.ClosedSubjects)
}

func TestStoreListAndDelete(t *testing.T) {
	env := bustest.Start(t)
	st := sentinels.NewStore(env.KeyValue(t, sentinels.RecordsBucket()))
	ctx := context.Background()
	empty, err := st.List(ctx)
	require.NoError(t, err)
	require.Empty(t, empty)
	for i := 3; i >= 1; i-- {
		require.NoError(t, st.Create(ctx, &sentinel.Sentinel{ID: sentinel.NewSentinelID(), CreatedTs: int64(i)}))
	}
	recs, err := st.List(ctx)
	require.NoError(t, err)
	require.Len(t, recs, 3)
	require.Equal(t, []int64{1, 2, 3}, []int64{recs[0].CreatedTs, recs[1].CreatedTs, recs[2].CreatedTs}, "oldest first")
	require.NoError(t, st.Delete(ctx, recs[0].ID))
	require.ErrorIs(t, st.Delete(ctx, recs[0].ID), sentinels.ErrNotFound)
	_, _, err = st.Get(ctx, "not a key!")
	require.ErrorIs(t, err, sentinels.ErrNotFound)
	recs, err = st.List(ctx)
	require.NoError(t, err)
	require.Len(t, recs, 2)
}

func TestSeenWindowKeepsAndPrunes(t *testing.T) {
	env := bustest.Start(t)
	ctx := context.Background()
	seen := sentinels.NewSeen(env.KeyValue(t, sentinels.SeenBucket()))
	has, err := seen.Has(ctx, "sen_a", "evt_1")
	require.NoError(t, err)
	require.False(t, has)
	require.NoError(t, seen.Mark(ctx, "sen_a", "evt_1"))
	has, err = seen.Has(ctx, "sen_a", "evt_1")
	require.NoError(t, err)
	require.True(t, has)
	has, _ = seen.Has(ctx, "sen_b", "evt_1")
	require.False(t, has, "windows are per sentinel")
	require.NoError(t, seen.Forget(ctx, "sen_a"))
	has, _ = seen.Has(ctx, "sen_a", "evt_1")
	require.False(t, has)
}

func TestCacheSeesLocalWritesAtOnceAndOtherNodesEventually(t *testing.T) {
	env := bustest.Start(t)
	ctx := context.Background()
	a := sentinels.NewStore(env.KeyValue(t, sentinels.RecordsBucket()))
	require.NoError(t, a.StartCache(ctx))
	defer a.StopCache()
	b := sentinels.NewStore(env.KeyValue(t, sentinels.RecordsBucket())) // another node, no cache
	id := sentinel.NewSentinelID()
	require.NoError(t, a.Create(ctx, &sentinel.Sentinel{ID: id}))
	recs, err := a.List(ctx)
	require.NoError(t, err)
	require.Len(t, recs, 1, "read your own write")
	recs[0].ClosedSubjects = append(recs[0].ClosedSubjects, "mutated")
	again, _ := a.List(ctx)
	require.Empty(t, again[0].ClosedSubjects, "List hands out copies")

	other := sentinel.NewSentinelID()
	require.NoError(t, b.Create(ctx, &sentinel.Sentinel{ID: other}))
	bustest.Eventually(t, 5*time.Second, func() bool { r, _ := a.List(ctx); return len(r) == 2 }, "the other node's record arrives")
	_, err = b.Update(ctx, other, func(r *sentinel.Sentinel) error { r.EventCount = 7; return nil })
	require.NoError(t, err)
	bustest.Eventually(t, 5*time.Second, func() bool {
		r, _ := a.List(ctx)
		for _, x := range r {
			if x.ID == other {
				return x.EventCount == 7
			}
		}
		return false
	}, "the other node's update arrives")
	require.NoError(t, a.Delete(ctx, id))
	recs, _ = a.List(ctx)
	require.Len(t, recs, 1, "a local delete is visible at once")
	require.NoError(t, b.Delete(ctx, other))
	bustest.Eventually(t, 5*time.Second, func() bool { r, _ := a.List(ctx); return len(r) == 0 }, "the other node's delete arrives")
}

// Issue 21, item 10: a removed sentinel's delete marker stayed in the
// records bucket forever; PurgeDeleteMarkers drops the old ones (here all:
// a negative age), and the live records stay.
func TestPurgeDeleteMarkersDropsRemovedRecordsMarkers(t *testing.T) {
	env := bustest.Start(t)
	ctx := context.Background()
	st := sentinels.NewStore(env.KeyValue(t, sentinels.RecordsBucket()))
	for _, id := range []string{"sen_gone", "sen_kept"} {
		require.NoError(t, st.Create(ctx, &sentinel.Sentinel{ID: id, Status: sentinel.StatusActive, ClosedSubjects: []string{}}))
	}
	require.NoError(t, st.Delete(ctx, "sen_gone"))
	require.NoError(t, st.PurgeDeleteMarkers(ctx, -1))
	info, err := env.KeyValue(t, sentinels.RecordsBucket()).Status(ctx)
	require.NoError(t, err)
	require.Equal(t, uint64(1), info.Values(), "only the live record is left")
	_, _, err = st.Get(ctx, "sen_kept")
	require.NoError(t, err)
}
