package cluster_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/e2e/e2etest"
)

// One node of three started alone, as an orchestrator would start it, is
// live the moment its listener is bound: /healthz answers 200 on the first
// request, before any peer runs. /readyz answers 503 waiting_for_peers
// with the routes it has and how long it has waited, its API 503
// not_ready with the same reason; it outlasts cluster.wait (it warns and
// keeps waiting) and the arrival of a second peer (a new cluster elects
// its first meta leader only once every server it expects runs), and it
// becomes ready when the last one arrives, as do they.
func TestNodeStartedAloneIsLiveAndWaitsForItsPeers(t *testing.T) {
	c := e2etest.PrepareCluster(t, binary, e2etest.ClusterOptions{Env: []string{"AGENTPROTO_CLUSTER_WAIT=1s"}})
	n1 := c.Launch(t, 0)
	url := n1.WaitListening(t, 30*time.Second)
	a := api{t: t, url: url, token: c.Token}

	ans := a.do("GET", "/healthz", nil)
	require.Equal(t, http.StatusOK, ans.status, "live as soon as it listens: %s", ans.raw)
	ready := a.do("GET", "/readyz", nil)
	require.Equal(t, http.StatusServiceUnavailable, ready.status, ready.raw)
	require.Equal(t, "not_ready", ready.body["error"], ready.raw)
	require.Equal(t, "waiting_for_peers", ready.body["reason"], ready.raw)
	require.Contains(t, ready.body, "routes", ready.raw)
	require.Contains(t, ready.body, "waitingMs", ready.raw)
	ans = a.do("POST", "/sessions", map[string]any{"id": "early"})
	require.Equal(t, http.StatusServiceUnavailable, ans.status, ans.raw)
	require.Equal(t, "not_ready", ans.body["error"], ans.raw)
	require.Equal(t, "waiting_for_peers", ans.body["reason"], ans.raw)
	require.Equal(t, "1", ans.header.Get("Retry-After"))

	// cluster.wait is 1 s: the node warns after it, again after another,
	// and keeps waiting.
	eventually(t, c, 60*time.Second, func() bool {
		return strings.Count(n1.Logs.String(), "still waiting for JetStream after cluster.wait") >= 2
	}, "two cluster.wait warnings")
	select {
	case <-n1.Done:
		t.Fatalf("the waiting node exited: %v\n%s", n1.ExitErr(), n1.Logs.String())
	default:
	}
	require.Equal(t, http.StatusOK, a.do("GET", "/healthz", nil).status)

	c.Launch(t, 1)
	eventually(t, c, 60*time.Second, func() bool {
		r := a.do("GET", "/readyz", nil)
		require.Equal(t, http.StatusServiceUnavailable, r.status, "two servers of a new three-server cluster elect no meta leader: %s", r.raw)
		return r.body["reason"] == "waiting_for_peers" && r.body["routes"] == float64(1)
	}, "n1 sees a route to n2 and still waits")

	c.Launch(t, 2)
	c.WaitReady(t)
	require.Equal(t, http.StatusOK, a.do("GET", "/readyz", nil).status)
	ans = a.do("POST", "/sessions", map[string]any{"id": "late"})
	require.Equal(t, http.StatusCreated, ans.status, ans.raw)
}

// A node stopped (SIGTERM) while it waits for its peers exits 0, at once.
func TestNodeStoppedWhileWaitingExitsCleanly(t *testing.T) {
	c := e2etest.PrepareCluster(t, binary, e2etest.ClusterOptions{})
	n := c.Launch(t, 0)
	url := n.WaitListening(t, 30*time.Second)
	a := api{t: t, url: url}
	require.Equal(t, "waiting_for_peers", a.do("GET", "/readyz", nil).body["reason"])
	took, err := n.Stop(30 * time.Second)
	require.NoError(t, err, "a stop while waiting is no failure (exit 0)\n%s", n.Logs.String())
	t.Logf("stopped in %s", took.Round(time.Millisecond))
}
