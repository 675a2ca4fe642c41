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
func TestClusterMCPEventsCursorWorksOnEveryNode(t *testing.T) {
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

// One webhook subscription in a cluster is delivered once, not once per
// node: its durable consumer hands each event to one node.
func TestClusterMCPEventsWebhookDeliveredOnce(t *testing.T) {
	cfgs := clusterConfigs(t, 3)
	for i := range cfgs {
		cfgs[i].MCPEvents.AllowPrivateCallbacks = true
		cfgs[i].MCPEvents.RetryBackoff = 50 * time.Millisecond
	}
	apps := startCluster(t, cfgs)
	c := newSEPClient(t, apps[0].URL(), apps[0].Token)
	rx := newReceiver(t, true)
	args := fakeArgs("fake:cluster-hook/1")
	_, e := c.subscribe("sentinel.event", args, rx.srv.URL, rx.secret, 600000)
	require.Nil(t, e, "%+v", e)
	var sen listedSentinel
	bustest.Eventually(t, 30*time.Second, func() bool {
		sen = subscriptionSentinel(t, apps[1].URL(), apps[1].Token, "webhook", "fake:cluster-hook/1")
		return sen.ID != ""
	}, "the subscription is visible on every node")
	bustest.Eventually(t, 30*time.Second, func() bool {
		for _, a := range apps {
			if a.MCPEvents.Webhooks().Running() != 1 {
				return false
			}
		}
		return true
	}, "every node runs one worker for the subscription")
	for i, id := range []string{"h1", "h2", "h3"} {
		pushFake(t, apps[i].URL(), sen.ID, fakeEvent(id, "fake:cluster-hook/1", "fake.one"))
	}
	bustest.Eventually(t, 60*time.Second, func() bool { evs, _, _, _ := rx.snapshot(); return len(evs) >= 3 }, "every event is delivered")
	// A last event: once it is in, any duplicate of the first three
	// would have come too.
	pushFake(t, apps[2].URL(), sen.ID, fakeEvent("h4", "fake:cluster-hook/1", "fake.one"))
	bustest.Eventually(t, 60*time.Second, func() bool { evs, _, _, _ := rx.snapshot(); return len(evs) >= 4 }, "the last event is delivered")
	evs, _, attempts, bad := rx.snapshot()
	require.Len(t, evs, 4)
	for _, id := range []string{"h1", "h2", "h3", "h4"} {
		require.Equal(t, 1, attempts[id], "event %s POSTed once", id)
	}
	require.Zero(t, bad)
}
