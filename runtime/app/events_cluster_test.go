package app_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/bus/bustest"
)

// In a cluster every node serves MCP Events: a poll cursor minted by one
// node is accepted by another (the signing key and the subscriptions are
// in JetStream), and the events come after it there.
func TestClusterEventsCursorWorksOnEveryNode(t *testing.T) {
	apps := startCluster(t, clusterConfigs(t, 3))
	a, b := apps[0], apps[1]
	ca, cb := newSEPClient(t, a.URL(), a.Token), newSEPClient(t, b.URL(), b.Token)
	args := fakeArgs("fake:cluster/1")
	boot := ca.poll("sentinel.event", args, nil, nil)
	var sen listedSentinel
	bustest.Eventually(t, 30*time.Second, func() bool {
		sen = subscriptionSentinel(t, b.URL(), b.Token, "poll", "fake:cluster/1")
		return sen.ID != ""
	}, "the subscription is visible on every node")
	pushFake(t, apps[2].URL(), sen.ID, fakeEvent("c1", "fake:cluster/1", "fake.one"))
	var got []occurrence
	bustest.Eventually(t, 60*time.Second, func() bool {
		got = cb.poll("sentinel.event", args, boot.Cursor, nil).Events
		return len(got) > 0
	}, "node B serves node A's cursor")
	require.Len(t, got, 1)
	require.Equal(t, "c1", got[0].EventID)
	require.Len(t, sentinelsOf(t, b.URL(), b.Token), 1, "one subscription, one sentinel, whatever node polls")
}
