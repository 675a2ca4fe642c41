package sentinels

import (
	"context"
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
	s := NewStore(env.KeyValue(t, RecordsBucket()))
	s.MirrorCheck = 20 * time.Millisecond
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
	s := NewStore(env.KeyValue(t, RecordsBucket()))
	s.MirrorCheck = 20 * time.Millisecond
	s.Pause = pause.New()
	require.NoError(t, s.StartCache(context.Background()))
	t.Cleanup(s.StopCache)
	first := s.mirror()
	held := s.Pause.Hold(PointMirrorApply, "")
	writeElsewhere(t, env, "sen_stalled")
	<-held.Reached()
	bustest.Eventually(t, 10*time.Second, func() bool { return mirrored(s, "sen_stalled") }, "a fresh mirror has the write")
	require.NotSame(t, first, s.mirror())
}
