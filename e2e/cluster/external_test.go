package cluster_test

import (
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/bus/embedded"
	"github.com/agentproto/sentinel/e2e/e2etest"
)

// TestExternalNATSNodeKilledOtherCarriesOn runs two nodes in external
// mode on one nats-server started by the test (loopback, JetStream, a
// client token): polled and pushed events reach every session; after one
// node is SIGKILLed the other takes over its sentinels' polls, keeps
// delivering every event once, in order, and takes writes.
func TestExternalNATSNodeKilledOtherCarriesOn(t *testing.T) {
	t.Parallel()
	token := strings.Repeat("e2e-nats-token-", 3)
	srv, err := embedded.Start(embedded.Config{StoreDir: filepath.Join(t.TempDir(), "nats"), Listen: "127.0.0.1:-1", ListenToken: token,
		ServerName: "external", ReadyTimeout: 30 * time.Second}, nil)
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	feed := &fakeFeed{path: filepath.Join(t.TempDir(), "feed.jsonl")}
	c := e2etest.StartCluster(t, binary, e2etest.ClusterOptions{Nodes: 2, NATSURL: srv.ClientURL(), NATSToken: token, Env: []string{
		"AGENTPROTO_TESTING_FAKE_FEED=" + feed.path,
		"AGENTPROTO_POLL_ACTIVE_INTERVAL=1s", "AGENTPROTO_POLL_IDLE_INTERVAL=1s",
		"AGENTPROTO_BUS_MEMBER_TTL=2s", "AGENTPROTO_BUS_LEASE_TTL=3s",
	}})

	// Eight sentinels on eight repositories: poll ownership spreads over
	// the two nodes by repository.
	const sentinels = 8
	wl := newFeedWorkload(t, c, feed, "ext", sentinels, 2)
	delivered := func(n api) { wl.delivered(n, 60*time.Second) }
	wl.round(1)
	delivered(nodeAPI(t, c, 0))

	// SIGKILL the node that polls most; the other carries on.
	const series = `sentinel_poll_duration_seconds_count{provider="fake"}`
	before := make([]float64, 2)
	for i := range before {
		before[i], _ = metric(t, nodeAPI(t, c, i), series)
	}
	victim, most := -1, 0.0
	eventually(t, c, 30*time.Second, func() bool {
		for i := range before {
			now, _ := metric(t, nodeAPI(t, c, i), series)
			if now-before[i] > most {
				victim, most = i, now-before[i]
			}
		}
		return most >= 2
	}, "the nodes poll")
	survivor := nodeAPI(t, c, 1-victim)
	c.Kill(victim)
	t.Logf("killed %s", c.Node(victim).Name)
	polled, _ := metric(t, survivor, series)
	ans, err := fakePush(survivor.url, wl.ids[0], fakeEnvelope(t, "evt_ext_push", wl.subject(0)))
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, ans.status, ans.raw)
	wl.want[0] = append(wl.want[0], "evt_ext_push")
	delivered(survivor)
	wl.round(2)
	wl.round(3)
	delivered(survivor)
	now, _ := metric(t, survivor, series)
	require.GreaterOrEqual(t, now-polled, float64(sentinels), "the survivor polls every sentinel")
	id := createSentinel(t, survivor, map[string]any{"subject": wl.subject(sentinels), "types": []string{"*"}, "sessionId": wl.session(sentinels), "provider": "fake"})
	require.Equal(t, http.StatusOK, survivor.do("DELETE", "/sentinels/"+id, nil).status, "the survivor takes writes")
}
