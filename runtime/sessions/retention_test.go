package sessions_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/runtime/runtimetest"
	"github.com/agentproto/sentinel/runtime/sessions"
)

// Issue 21, item 10: ended sessions and inbox read cursors were kept
// forever. A session ended longer ago than the retention is pruned (a live
// one, or one ended recently, stays); a read cursor not advanced for the
// inbox's max age is dropped (every message it passed has aged out).
func TestEndedSessionsAndStaleCursorsArePruned(t *testing.T) {
	e := newEnvWith(t, runtimetest.Options{NoWorkers: true})
	ctx := context.Background()
	for _, id := range []string{"old", "recent", "live"} {
		e.register(t, sentinel.RegisterSession{ID: id})
	}
	_, err := e.Reg.End(ctx, "old", sessions.ReasonOperatorStopped)
	require.NoError(t, err)
	require.NoError(t, e.Inboxes.Advance(ctx, "old", 7))

	e.Clock.Advance(40 * 24 * time.Hour)
	_, err = e.Reg.End(ctx, "recent", sessions.ReasonOperatorStopped)
	require.NoError(t, err)
	require.NoError(t, e.Reg.Report(ctx, "live", sentinel.SessionReport{Kind: sentinel.FollowTurnEnd}))
	n, err := e.Reg.PruneEnded(ctx, 30*24*time.Hour)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	s, err := e.Reg.Lookup(ctx, "old")
	require.NoError(t, err)
	require.Nil(t, s, "the session ended 40 days ago is gone")
	for _, id := range []string{"recent", "live"} {
		s, err := e.Reg.Lookup(ctx, id)
		require.NoError(t, err)
		require.NotNil(t, s, id)
	}

	n, err = e.Inboxes.PruneCursors(ctx, time.Now().Add(31*24*time.Hour), 30*24*time.Hour)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	c, err := e.Inboxes.Cursor(ctx, "old")
	require.NoError(t, err)
	require.Zero(t, c)
}
