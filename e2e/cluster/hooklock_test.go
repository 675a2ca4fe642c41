package cluster_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/e2e/e2etest"
	"github.com/agentproto/sentinel/providers/github/githubtest"
)

// lockRepo is a repository only this scenario watches.
const lockRepo = "Codertocat/Lock-Test"

// twoNodesCreateOnOneRepository proves the webhook provider's hook lock
// spans nodes: two nodes create webhook sentinels on one repository at
// the same moment, and GitHub ends up with one hook that both hold.
func twoNodesCreateOnOneRepository(t *testing.T, c *e2etest.Cluster, gh *githubtest.Server) {
	gh.AddRepo(lockRepo)
	a, b := nodeAPI(t, c, 0), nodeAPI(t, c, 1)
	const each = 1 // one create per node, at the same moment
	var wg sync.WaitGroup
	ids := make([]string, 2*each)
	answers := make([]string, 2*each)
	for i := 0; i < each; i++ {
		for j, n := range []api{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				body := map[string]any{"subject": fmt.Sprintf("github:%s#%d", lockRepo, 10+2*i+j),
					"types": []string{"*"}, "sessionId": "lock-s", "provider": "webhook"}
				ans, err := call(n.url, n.token, "POST", "/sentinels", body, nil)
				for try := 0; try < 20 && err == nil && ans.status == 503; try++ {
					// 503: nothing was done (a loaded node's heartbeat lagged); ask again.
					<-time.After(250 * time.Millisecond)
					ans, err = call(n.url, n.token, "POST", "/sentinels", body, nil)
				}
				if err != nil {
					answers[2*i+j] = err.Error()
				} else {
					answers[2*i+j] = fmt.Sprintf("%d %s", ans.status, ans.raw)
				}
				if err == nil && ans.status == 201 {
					ids[2*i+j] = ans.body["sentinel"].(map[string]any)["id"].(string)
				}
			}()
		}
	}
	wg.Wait()
	for i, id := range ids {
		require.NotEmpty(t, id, "create %d failed: %s", i, answers[i])
	}
	hooks := gh.Hooks(lockRepo)
	require.Len(t, hooks, 1, "one GitHub hook for the repository, whichever node created first")
	require.True(t, strings.HasPrefix(hooks[0].URL, whPrefix))
	// Every sentinel holds it: removing all but one keeps the hook; the
	// last removal deletes it.
	for _, id := range ids[:len(ids)-1] {
		require.Equal(t, 200, b.do("DELETE", "/sentinels/"+id, nil).status)
	}
	require.Len(t, gh.Hooks(lockRepo), 1, "the hook stays while a holder remains")
	require.Equal(t, 200, a.do("DELETE", "/sentinels/"+ids[len(ids)-1], nil).status)
	eventually(t, c, 30*time.Second, func() bool { return len(gh.Hooks(lockRepo)) == 0 }, "the last holder's removal deletes the hook")
}
