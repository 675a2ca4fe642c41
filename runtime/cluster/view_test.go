package cluster_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/bus/bustest"
	"github.com/agentproto/sentinel/runtime/cluster"
)

// The view reads what the nodes' rounds wrote, and a lost node's traces
// go: its heartbeat and the leases it held (not those of others).
func TestViewReadsMembersAndLeasesAndRemovesALostNode(t *testing.T) {
	env := bustest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	nodes := env.KeyValue(t, cluster.NodesBucket(env.Bus.Cfg.MemberTTL))
	leases := env.KeyValue(t, cluster.LeasesBucket(env.Bus.Cfg.LeaseTTL))
	now := time.Now().UTC()
	put := func(name string, beat time.Time) {
		raw, _ := json.Marshal(cluster.Member{Name: name, APIURL: "http://" + name, StartedAt: now.Add(-time.Hour), BeatAt: beat})
		_, err := nodes.Put(ctx, "node."+name, raw)
		require.NoError(t, err)
	}
	put("b", now)
	put("a", now.Add(-time.Minute)) // a crashed node whose key has not aged out yet
	for item, owner := range map[string]string{"poll.0": "a", "poll.1": "b", "job.expiry": "a"} {
		raw, _ := json.Marshal(map[string]any{"owner": owner, "since": now})
		_, err := leases.Create(ctx, item, raw)
		require.NoError(t, err)
	}

	ms, err := cluster.ReadMembers(ctx, nodes)
	require.NoError(t, err)
	require.Len(t, ms, 2)
	require.Equal(t, "a", ms[0].Name)
	require.Equal(t, "http://b", ms[1].APIURL)
	require.False(t, cluster.Live(ms[0], now, 6*time.Second), "a stale beat is not live")
	require.True(t, cluster.Live(ms[1], now, 6*time.Second))

	ls, err := cluster.ReadLeases(ctx, leases)
	require.NoError(t, err)
	require.Len(t, ls, 3)
	require.Equal(t, "b", ls["poll.1"].Owner)

	n, err := cluster.ReleaseLeasesOf(ctx, leases, "a")
	require.NoError(t, err)
	require.Equal(t, 2, n)
	removed, err := cluster.RemoveMember(ctx, nodes, "a")
	require.NoError(t, err)
	require.True(t, removed)
	removed, err = cluster.RemoveMember(ctx, nodes, "a")
	require.NoError(t, err)
	require.False(t, removed, "a second removal finds nothing")

	ms, err = cluster.ReadMembers(ctx, nodes)
	require.NoError(t, err)
	require.Len(t, ms, 1)
	ls, err = cluster.ReadLeases(ctx, leases)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"poll.1": "b"}, map[string]string{"poll.1": ls["poll.1"].Owner})
	require.Len(t, ls, 1)
	require.Len(t, cluster.ItemsOf(32), 32+len(cluster.Jobs))
}
