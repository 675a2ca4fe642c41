package follow_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus/bustest"
	"github.com/agentproto/sentinel/runtime/follow"
	"github.com/agentproto/sentinel/runtime/pause"
)

// Issue 21, item 9: two nodes upsert a follow by one key at once. Node A
// has decided the follow's id and pauses before writing it
// (follow.PointUpsert); node B upserts the same key to the end; A resumes.
// One follow holds the key (before, each node's lock was its own, and two
// follows were created).
func TestTwoNodesUpsertingOneKeyWriteOneFollow(t *testing.T) {
	be := bustest.Start(t)
	other := bustest.Join(t, be)
	points := pause.New()
	a, b := follow.NewStore(followsOf(t, be.Bus), follow.WithStorePause(points)), follow.NewStore(followsOf(t, other.Bus))
	held := points.Hold(follow.PointUpsert, "k1")
	ctx := context.Background()
	f := sentinel.Follow{Follower: "chief", Key: "k1", Selector: sentinel.FollowSelector{All: true}}

	type result struct {
		f       sentinel.Follow
		created bool
		err     error
	}
	done := make(chan result, 1)
	go func() {
		got, created, err := a.Upsert(ctx, f, "2026-11-01T10:00:00Z")
		done <- result{got, created, err}
	}()
	<-held.Reached()
	fb, createdB, err := b.Upsert(ctx, f, "2026-11-01T10:00:01Z")
	require.NoError(t, err)
	require.True(t, createdB)
	held.Release()
	ra := <-done
	require.NoError(t, ra.err)
	require.Equal(t, fb.ID, ra.f.ID, "one id for the key")

	all, err := b.List(ctx, "")
	require.NoError(t, err)
	require.Len(t, all, 1)
	found, err := b.Find(ctx, "k1")
	require.NoError(t, err)
	require.Equal(t, fb.ID, found.ID)

	// Removed by key, the key is free for a new follow.
	_, err = a.Remove(ctx, "k1")
	require.NoError(t, err)
	again, created, err := b.Upsert(ctx, f, "2026-11-01T10:00:02Z")
	require.NoError(t, err)
	require.True(t, created)
	require.NotEqual(t, fb.ID, again.ID)
}
