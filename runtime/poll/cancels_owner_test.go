package poll_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus/bustest"
	"github.com/agentproto/sentinel/runtime/cluster"
	"github.com/agentproto/sentinel/runtime/poll"
	"github.com/agentproto/sentinel/runtime/runtimetest"
)

// Issue 21, item 9: the cancel worker's start-up sweep ran on every node
// without an ownership check, so a due provider cancel was made once per
// node. Node A holds the tombstones job; node B starts its poll loop: its
// start-up sweep dispatches nothing (poll.PointSweepSkipped).
func TestOnlyTheTombstonesOwnerRunsTheStartUpSweep(t *testing.T) {
	a := runtimetest.Start(t, runtimetest.Options{NoWorkers: true, LeaderReads: true})
	b := runtimetest.Join(t, a, runtimetest.Options{NoWorkers: true})
	owner := ""
	for i := 0; owner == ""; i++ {
		if n := fmt.Sprintf("a%d", i); cluster.Preferred(cluster.JobItem(cluster.JobTombstones), []string{n, "b"}) == n {
			owner = n
		}
	}
	nodeA, nodeB := member(a, owner), member(b, "b")
	nodeA.Round(context.Background())
	nodeB.Round(context.Background())
	nodeA.Round(context.Background())
	require.True(t, nodeA.OwnsJob(cluster.JobTombstones))
	require.False(t, nodeB.OwnsJob(cluster.JobTombstones))
	require.NoError(t, nodeB.Writable())

	h := sentinel.Handle{Provider: "fake", RemoteID: "fake-removed-1"}
	require.NoError(t, b.Expirer.Tombstones().Add(context.Background(), sentinel.NewSentinelID(), "fake", h, errors.New("HTTP 502")))
	b.Clock.Advance(time.Hour) // due

	skipped := b.Pause.Watch(poll.PointSweepSkipped, "")
	loop := b.NewLoop(poll.WithOwnership(nodeB),
		poll.WithAfter(func(time.Duration) <-chan time.Time { return nil })) // no tick: the start-up sweep only
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- loop.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	bustest.Eventually(t, 10*time.Second, func() bool { return skipped.Count() > 0 || len(b.Fake.Cancels()) > 0 },
		"B's start-up sweep ran")
	require.Empty(t, b.Fake.Cancels(), "the node that does not own the tombstones job cancels nothing")
}
