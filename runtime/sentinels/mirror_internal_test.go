package sentinels

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus/bustest"
	"github.com/agentproto/sentinel/runtime/pause"
)

// mirrored reports whether the store's mirror (not a bucket read) holds id.
func mirrored(s *Store, id string) bool {
	c := s.mirror()
	if c == nil {
		return false
	}
	_, _, ok := c.get(id)
	return ok
}

func writeElsewhere(t *testing.T, env *bustest.Env, id string) {
	t.Helper()
	other := NewStore(env.KeyValue(t, RecordsBucket())) // another node's store
	require.NoError(t, other.Create(context.Background(), &sentinel.Sentinel{ID: id, Status: sentinel.StatusActive, ClosedSubjects: []string{}}))
}

// Issue 21, item 10: a mirror whose watcher ended by itself was dropped
// for good (the store read the bucket until the node restarted). Its
// supervisor starts it again, and it follows other nodes' writes again.
func TestTheMirrorRestartsWhenItsWatcherCloses(t *testing.T) {
	env := bustest.Start(t)
	s := NewStore(env.KeyValue(t, RecordsBucket()), WithMirrorCheck(20*time.Millisecond))
	require.NoError(t, s.StartCache(context.Background()))
	t.Cleanup(s.StopCache)
	first := s.mirror()
	require.NoError(t, first.watcher.Stop()) // the watcher ends by itself
	bustest.Eventually(t, 10*time.Second, func() bool { m := s.mirror(); return m != nil && m != first }, "the mirror restarted")
	writeElsewhere(t, env, "sen_after")
	bustest.Eventually(t, 10*time.Second, func() bool { return mirrored(s, "sen_after") }, "the new mirror follows writes")
}

// A mirror whose watcher stalls without closing (held at
// sentinels.PointMirrorApply) is found behind the bucket with no
// progress, stopped and started again.
func TestAStalledMirrorIsRestarted(t *testing.T) {
	env := bustest.Start(t)
	s := NewStore(env.KeyValue(t, RecordsBucket()), WithMirrorCheck(20*time.Millisecond), WithStorePause(pause.New()))
	require.NoError(t, s.StartCache(context.Background()))
	t.Cleanup(s.StopCache)
	first := s.mirror()
	held := s.pause.Hold(PointMirrorApply, "")
	writeElsewhere(t, env, "sen_stalled")
	<-held.Reached()
	bustest.Eventually(t, 10*time.Second, func() bool { return mirrored(s, "sen_stalled") }, "a fresh mirror has the write")
	require.NotSame(t, first, s.mirror())
}

// After a load of a bucket with a history of puts, rewrites and deletes,
// and after more of them while it runs, the mirror holds exactly what the
// bucket holds, each record at its last revision.
func TestTheMirrorHoldsWhatTheBucketHolds(t *testing.T) {
	env := bustest.Start(t)
	ctx := context.Background()
	kv := env.KeyValue(t, RecordsBucket())
	other := NewStore(kv) // another node's writes
	churn := func(round, n int) {
		for i := range n {
			id := fmt.Sprintf("sen_%d_%d", round, i)
			require.NoError(t, other.Create(ctx, &sentinel.Sentinel{ID: id, Status: sentinel.StatusActive, EventCount: 0, ClosedSubjects: []string{}}))
			switch {
			case i%3 == 0:
				require.NoError(t, kv.Delete(ctx, id))
			case i%5 == 0:
				_, err := other.Update(ctx, id, func(r *sentinel.Sentinel) error { r.EventCount = i; return nil })
				require.NoError(t, err)
			}
		}
	}
	same := func(s *Store) {
		t.Helper()
		require.NoError(t, s.SyncMirror(ctx))
		c := s.mirror()
		require.NotNil(t, c)
		keys, err := kv.ListKeys(ctx)
		require.NoError(t, err)
		want := map[string]uint64{}
		for k := range keys.Keys() {
			e, err := kv.Get(ctx, k)
			require.NoError(t, err)
			want[k] = e.Revision()
		}
		c.mu.RLock()
		defer c.mu.RUnlock()
		require.Len(t, c.recs, len(want))
		for id, rev := range want {
			require.Equal(t, rev, c.known[id], "%s at its last revision", id)
			require.Equal(t, id, c.recs[id].ID)
		}
	}
	churn(0, 600)
	s := NewStore(kv)
	require.NoError(t, s.StartCache(ctx))
	t.Cleanup(s.StopCache)
	same(s)
	churn(1, 600)
	same(s)
}

// While the mirror holds an update (PointMirrorApply), the updates the
// watcher delivers behind it (a put, then a delete: the bucket's last
// revision) do not move upTo: SyncMirror does not answer before the held
// update is applied, then sees them all.
func TestTheMirrorDoesNotAdvancePastAHeldUpdate(t *testing.T) {
	env := bustest.Start(t)
	ctx := context.Background()
	kv := env.KeyValue(t, RecordsBucket())
	writeElsewhere(t, env, "sen_old")
	s := NewStore(kv, WithStorePause(pause.New()))
	require.NoError(t, s.StartCache(ctx))
	t.Cleanup(s.StopCache)
	held := s.pause.Hold(PointMirrorApply, "")
	writeElsewhere(t, env, "sen_held")
	<-held.Reached()
	writeElsewhere(t, env, "sen_behind")
	require.NoError(t, kv.Delete(ctx, "sen_old")) // the bucket's last revision
	sctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, s.SyncMirror(sctx), context.DeadlineExceeded, "SyncMirror answered while an earlier update waited")
	require.False(t, mirrored(s, "sen_held"))
	held.Release()
	require.NoError(t, s.SyncMirror(ctx))
	require.True(t, mirrored(s, "sen_held"))
	require.True(t, mirrored(s, "sen_behind"))
	require.False(t, mirrored(s, "sen_old"))
}
