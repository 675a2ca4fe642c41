package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/bus"
	"github.com/agentproto/sentinel/bus/bustest"
	"github.com/agentproto/sentinel/bus/embedded"
	"github.com/agentproto/sentinel/runtime/cluster"
)

func shortTTLs(c *bus.Config, _ *embedded.Config) {
	c.MemberTTL, c.LeaseTTL = 2*time.Second, 3*time.Second
}

type member struct {
	env    *bustest.Env
	node   *cluster.Node
	cancel context.CancelFunc
	done   chan struct{}
}

func startMembers(t *testing.T, envs []*bustest.Env) []*member {
	var out []*member
	// Every node's buckets first, so the nodes start together.
	type buckets struct{ nodes, leases jetstream.KeyValue }
	bks := make([]buckets, len(envs))
	for i, e := range envs {
		bks[i] = buckets{e.KeyValue(t, cluster.NodesBucket(e.Bus.Cfg.MemberTTL)), e.KeyValue(t, cluster.LeasesBucket(e.Bus.Cfg.LeaseTTL))}
	}
	for i, e := range envs {
		cfg := cluster.DefaultConfig(e.Bus.Cfg.MemberTTL, e.Bus.Cfg.LeaseTTL)
		cfg.Heartbeat = 200 * time.Millisecond
		cfg.PollPartitions = 12
		n := cluster.New(fmt.Sprintf("n%d", i+1), bks[i].nodes, bks[i].leases, cfg)
		ctx, cancel := context.WithCancel(context.Background())
		m := &member{env: e, node: n, cancel: cancel, done: make(chan struct{})}
		go func() { defer close(m.done); n.Run(ctx) }()
		t.Cleanup(func() { cancel(); <-m.done })
		out = append(out, m)
	}
	return out
}

// owners maps every item to the live members that claim it.
func owners(ms []*member) map[string][]string {
	out := map[string][]string{}
	for _, m := range ms {
		if m == nil {
			continue
		}
		for _, item := range m.node.Held() {
			out[item] = append(out[item], m.node.Name())
		}
	}
	return out
}

func exactlyOneOwnerEach(ms []*member, items []string) bool {
	o := owners(ms)
	for _, item := range items {
		if len(o[item]) != 1 {
			return false
		}
	}
	return true
}

func TestLeasesSpreadAndMoveWhenANodeDies(t *testing.T) {
	envs := bustest.StartCluster(t, 3, shortTTLs)
	ms := startMembers(t, envs)
	items := ms[0].node.Items()
	bustest.Eventually(t, 30*time.Second, func() bool { return exactlyOneOwnerEach(ms, items) }, "every item owned once")
	per := map[string]int{}
	for _, os := range owners(ms) {
		per[os[0]]++
	}
	require.Len(t, per, 3, "ownership spreads over the three nodes: %v", per)
	for _, m := range ms {
		require.NoError(t, m.node.Writable())
	}

	// Lose n2: stop its node and its server.
	victim := ms[1]
	victimItems := victim.node.Held()
	require.NotEmpty(t, victimItems)
	victim.cancel()
	<-victim.done
	victim.env.Stop()
	live := []*member{ms[0], ms[2]}
	bustest.Eventually(t, 30*time.Second, func() bool { return exactlyOneOwnerEach(live, items) }, "the survivors own every item")
	for _, item := range victimItems {
		require.Len(t, owners(live)[item], 1, item)
	}
}

// A node cut off from quorum stops owning within LeaseTTL (before another
// node can take its leases), and says why it cannot write.
func TestCutOffNodeLapses(t *testing.T) {
	envs := bustest.StartCluster(t, 3, shortTTLs)
	ms := startMembers(t, envs)
	items := ms[0].node.Items()
	bustest.Eventually(t, 30*time.Second, func() bool { return exactlyOneOwnerEach(ms, items) }, "every item owned once")
	// Cut n3 off: the two others stop; n3's server runs alone, without
	// quorum.
	for _, m := range ms[:2] {
		m.cancel()
		<-m.done
		m.env.Stop()
	}
	cut := ms[2]
	bustest.Eventually(t, 15*time.Second, func() bool { return len(cut.node.Held()) == 0 }, "a node without quorum owns nothing")
	// Its leases lapse locally first (a renewal that cannot be stored);
	// the heartbeat's staleness follows within MemberTTL.
	bustest.Eventually(t, 15*time.Second, func() bool { return errors.Is(cut.node.Writable(), cluster.ErrNoQuorum) }, "a node without quorum says why it cannot write")
}

func TestPreferredIsStable(t *testing.T) {
	members := []string{"a", "b", "c"}
	moved := 0
	for p := 0; p < 100; p++ {
		item := cluster.PollItem(p)
		before := cluster.Preferred(item, members)
		after := cluster.Preferred(item, []string{"a", "b", "c", "d"})
		if before != after {
			require.Equal(t, "d", after, "adding a member moves items only to it")
			moved++
		}
	}
	require.Greater(t, moved, 10)
	require.Less(t, moved, 45)
}
