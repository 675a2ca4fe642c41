package sessions_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/runtime/runtimetest"
	"github.com/agentproto/sentinel/runtime/sessions"
)

// Issue 21, item 4: node A stores a session's end and dies (a crash, an
// election) before the lifecycle event reaches the stream
// (sessions.PointLifecycle fails). The event waits in the session's
// outbox: a repeated report publishes it (before, the session was already
// ended, so nothing was published, ever), once.
func TestALifecycleEventLostAfterItsWriteIsPublishedByARepeat(t *testing.T) {
	a := newEnvWith(t, runtimetest.Options{NoWorkers: true})
	a.register(t, sentinel.RegisterSession{ID: "w"})
	a.Pause.Fail(sessions.PointLifecycle, "w", 1, nil)
	ctx := context.Background()
	require.NoError(t, a.Reg.Report(ctx, "w", sentinel.SessionReport{Kind: sentinel.FollowExited}))
	require.Empty(t, a.lifecycle(t), "the publish was lost with the node")

	require.NoError(t, a.Reg.Report(ctx, "w", sentinel.SessionReport{Kind: sentinel.FollowExited}))
	require.Equal(t, []string{sentinel.FollowExited}, kinds(a.lifecycle(t), "w"))
	require.NoError(t, a.Reg.Report(ctx, "w", sentinel.SessionReport{Kind: sentinel.FollowExited}))
	require.Len(t, a.lifecycle(t), 1, "published once")
	s, err := a.Reg.Lookup(ctx, "w")
	require.NoError(t, err)
	require.Empty(t, s.Pending, "the outbox is empty once published")
}

// The same without a repeat: node B's heartbeat sweep (every node runs it)
// publishes what A left in the outbox, in order.
func TestAnotherNodesSweepPublishesWhatAnOutboxHolds(t *testing.T) {
	a := newEnvWith(t, runtimetest.Options{NoWorkers: true, LeaderReads: true})
	b := joinEnv(t, a, runtimetest.Options{NoWorkers: true})
	a.register(t, sentinel.RegisterSession{ID: "w"})
	a.Pause.Fail(sessions.PointLifecycle, "w", -1, nil) // A never publishes
	ctx := context.Background()
	require.NoError(t, a.Reg.Report(ctx, "w", sentinel.SessionReport{Kind: sentinel.FollowTurnEnd, Excerpt: "one"}))
	require.NoError(t, a.Reg.RecordPR(ctx, "w", "https://github.com/acme/widgets/pull/3", sessions.PROpen, "a PR"))
	_, err := a.Reg.End(ctx, "w", sessions.ReasonCrashed)
	require.NoError(t, err)
	require.Empty(t, a.lifecycle(t))

	_, err = b.Reg.Sweep(ctx)
	require.NoError(t, err)
	evs := b.lifecycle(t)
	require.Equal(t, []string{sentinel.FollowTurnEnd, sentinel.FollowPROpened, sentinel.FollowCrashed}, kinds(evs, "w"))
	require.Equal(t, "one", evs[0].Detail)
	_, err = b.Reg.Sweep(ctx)
	require.NoError(t, err)
	require.Len(t, b.lifecycle(t), 3, "nothing published twice")
}
