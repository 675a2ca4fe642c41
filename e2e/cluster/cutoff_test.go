package cluster_test

import (
	"net/http"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/e2e/e2etest"
)

// TestCutOffNodeListsSessionsAndFollows pauses two of three nodes
// (SIGSTOP, as issue 31 did) and reads the lists from the third: a node
// cut off from quorum serves GET /sessions and GET /follows from its
// replica (never 500), and `sentinel session list` exits 0.
func TestCutOffNodeListsSessionsAndFollows(t *testing.T) {
	t.Parallel()
	c := e2etest.StartCluster(t, binary, e2etest.ClusterOptions{Env: []string{"AGENTPROTO_BUS_MEMBER_TTL=2s", "AGENTPROTO_BUS_LEASE_TTL=3s"}})
	n1 := nodeAPI(t, c, 0)
	for _, id := range []string{"chief", "worker-1"} {
		ans := n1.do("POST", "/sessions", map[string]any{"id": id})
		require.Equal(t, http.StatusCreated, ans.status, ans.raw)
	}
	ans := n1.do("POST", "/follows", map[string]any{"follower": "chief", "selector": map[string]any{"sessionIds": []string{"worker-1"}}})
	require.Equal(t, http.StatusCreated, ans.status, ans.raw)

	for _, i := range []int{1, 2} {
		p := c.Node(i).Cmd.Process
		require.NoError(t, p.Signal(syscall.SIGSTOP))
		t.Cleanup(func() { _ = p.Signal(syscall.SIGCONT) })
	}
	eventually(t, c, 60*time.Second, func() bool {
		r := n1.do("GET", "/readyz", nil)
		return r.status == http.StatusServiceUnavailable && r.body["reason"] == "cluster_unavailable"
	}, "n1 finds itself cut off")

	sessions := n1.do("GET", "/sessions", nil)
	require.Equal(t, http.StatusOK, sessions.status, "GET /sessions while cut off: %s", sessions.raw)
	require.Contains(t, sessions.raw, `"worker-1"`)
	follows := n1.do("GET", "/follows", nil)
	require.Equal(t, http.StatusOK, follows.status, "GET /follows while cut off: %s", follows.raw)
	require.Contains(t, follows.raw, `"follower":"chief"`)

	cmd := exec.Command(binary, "session", "list", "--url", n1.url)
	cmd.Env = append(e2etest.CleanEnv(), "AGENTPROTO_TOKEN="+c.Token, "AGENTPROTO_HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "sentinel session list while cut off: %s", out)
	require.True(t, strings.Contains(string(out), "worker-1"), string(out))
}
