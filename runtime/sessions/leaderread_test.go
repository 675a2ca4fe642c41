package sessions_test

import (
	"context"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus/bustest"
	"github.com/agentproto/sentinel/runtime/sessions"
)

// laggingReplica is the sessions bucket as a node whose replica has not
// caught up with the leader reads it: its own reads find nothing yet.
type laggingReplica struct{ jetstream.KeyValue }

func (laggingReplica) Get(context.Context, string) (jetstream.KeyValueEntry, error) {
	return nil, jetstream.ErrKeyNotFound
}

// A session another node registered a moment ago is found on a node
// whose replica is behind (Get answers from the bucket's leader), so a
// GET or a lifecycle report right after the registration does not answer
// session_not_found; an unknown or deleted session is still not found.
// Lookup, on every event's way to an inbox, reads the replica only (an
// unknown session is delivered to as it is): no leader read per event.
func TestASessionIsFoundWhileThisNodesReplicaLags(t *testing.T) {
	env := bustest.Start(t)
	ctx := context.Background()
	st := storesOf(t, env.Bus)
	registered := sessions.NewRegistry(env.Bus, st.Sessions) // the node it was registered through
	_, _, err := registered.Register(ctx, sentinel.RegisterSession{ID: "s-fresh"})
	require.NoError(t, err)
	lagging := sessions.NewRegistry(env.Bus, laggingReplica{st.Sessions})

	s, err := lagging.Get(ctx, "s-fresh")
	require.NoError(t, err)
	require.Equal(t, "s-fresh", s.ID)
	found, err := lagging.Lookup(ctx, "s-fresh")
	require.NoError(t, err)
	require.Nil(t, found, "Lookup reads this node's replica only")

	_, err = lagging.Get(ctx, "s-never")
	require.ErrorIs(t, err, sessions.ErrNotFound)
	require.NoError(t, st.Sessions.Delete(ctx, "s-fresh"))
	_, err = lagging.Get(ctx, "s-fresh")
	require.ErrorIs(t, err, sessions.ErrNotFound, "deleted on the leader")
}
