package app_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/runtime/app"
)

// Issue 29 through the HTTP API and MCP: one message per session and
// event, idempotent and keyed watches, warnings.

// prRepoEvent is a fake event on PR 7 that a repository watch matches too.
func prRepoEvent(id string) map[string]any {
	ev := fakeEvent(id, "github:acme/widgets#7", "github.check_run.completed")
	ev["subjects"] = []string{"github:acme/widgets#7", "github:acme/widgets"}
	return ev
}

func sentinelID(t *testing.T, out map[string]any) string {
	t.Helper()
	s, ok := out["sentinel"].(map[string]any)
	require.True(t, ok, "%v", out)
	return s["id"].(string)
}

func TestOneMessagePerEventOverHTTPAndMCP(t *testing.T) {
	t.Parallel()
	n := startNode(t)
	c := newSEPClient(t, n.app.URL(), n.app.Token)
	pr1 := sentinelID(t, n.expect(http.StatusCreated, "POST", "/sentinels", map[string]any{"subject": "github:acme/widgets#7", "sessionId": "s1", "provider": "fake", "types": []string{"*"}}))
	out := toolResult(t, c, "sentinel_watch", map[string]any{"subject": "github:acme/widgets", "sessionId": "s1", "provider": "fake", "types": []string{"*"}})
	repo := sentinelID(t, out)
	pr2 := sentinelID(t, n.expect(http.StatusCreated, "POST", "/sentinels", map[string]any{"subject": "github:acme/widgets#7", "sessionId": "s1", "provider": "fake", "types": []string{"*"}, "allowDuplicate": true}))
	require.NotEqual(t, pr1, pr2)

	const events = 50
	var evs []map[string]any
	for i := 0; i < events; i++ {
		evs = append(evs, prRepoEvent(fmt.Sprintf("evt_%02d", i)))
	}
	// The provider hands each event to every sentinel that watches it.
	for _, id := range []string{pr1, repo, pr2} {
		pushFake(t, n.app.URL(), id, evs...)
	}
	for _, id := range []string{pr1, repo, pr2} {
		require.Eventually(t, func() bool {
			s := n.expect(http.StatusOK, "GET", "/sentinels/"+id, nil)["sentinel"].(map[string]any)
			return s["eventCount"] == float64(events)
		}, 30*time.Second, 50*time.Millisecond, "sentinel %s counts every event", id)
	}
	shown := func(msgs []any) map[string]int {
		got := map[string]int{}
		for _, m := range msgs {
			var ev struct {
				ID string `json:"id"`
			}
			raw, _ := json.Marshal(m.(map[string]any)["data"])
			require.NoError(t, json.Unmarshal(raw, &ev))
			got[ev.ID]++
		}
		return got
	}
	msgs := n.expect(http.StatusOK, "GET", "/sessions/s1/inbox?limit=500", nil)["messages"].([]any)
	got := shown(msgs)
	require.Len(t, msgs, events, "each event shown once")
	require.Len(t, got, events)
	mcpMsgs := toolResult(t, c, "inbox_read", map[string]any{"sessionId": "s1", "limit": 500})["messages"].([]any)
	require.Len(t, mcpMsgs, events)
	require.Equal(t, got, shown(mcpMsgs))
}

func TestIdempotentWatchesOverHTTPAndMCP(t *testing.T) {
	t.Parallel()
	n := startNode(t)
	c := newSEPClient(t, n.app.URL(), n.app.Token)
	body := map[string]any{"prUrl": "https://github.com/acme/widgets/pull/7", "sessionId": "me", "provider": "fake"}
	first := n.expect(http.StatusCreated, "POST", "/sentinels", body)
	require.Equal(t, false, first["existing"])
	again := n.expect(http.StatusOK, "POST", "/sentinels", body)
	require.Equal(t, true, again["existing"])
	require.Equal(t, sentinelID(t, first), sentinelID(t, again))
	out := toolResult(t, c, "sentinel_watch", map[string]any{"prUrl": "https://github.com/acme/widgets/pull/7", "sessionId": "me", "provider": "fake"})
	require.Equal(t, true, out["existing"], "%v", out)
	require.Equal(t, sentinelID(t, first), sentinelID(t, out))

	body["allowDuplicate"] = true
	dup := n.expect(http.StatusCreated, "POST", "/sentinels", body)
	require.NotEqual(t, sentinelID(t, first), sentinelID(t, dup))

	// A key upserts: the same spec returns it, another urgency updates it
	// in place (over MCP), another subject moves the key to a new sentinel.
	keyed := map[string]any{"subject": "github:acme/widgets#8", "sessionId": "me", "provider": "fake", "key": "review-8"}
	k1 := sentinelID(t, n.expect(http.StatusCreated, "POST", "/sentinels", keyed))
	require.Equal(t, true, n.expect(http.StatusOK, "POST", "/sentinels", keyed)["existing"])
	out = toolResult(t, c, "sentinel_watch", map[string]any{"subject": "github:acme/widgets#8", "sessionId": "me", "provider": "fake", "key": "review-8", "urgency": "interrupt"})
	require.Equal(t, true, out["updated"], "%v", out)
	require.Equal(t, k1, sentinelID(t, out))
	s := n.expect(http.StatusOK, "GET", "/sentinels/"+k1, nil)["sentinel"].(map[string]any)
	require.Equal(t, "interrupt", s["target"].(map[string]any)["urgency"])
	require.Equal(t, "review-8", s["key"])
	keyed["subject"] = "github:acme/widgets#9"
	moved := n.expect(http.StatusOK, "POST", "/sentinels", keyed)
	require.Equal(t, true, moved["updated"])
	require.NotEqual(t, k1, sentinelID(t, moved))
	resp, _ := n.req("GET", "/sentinels/"+k1, nil)
	require.Equal(t, http.StatusNotFound, resp.StatusCode, "the replaced sentinel is removed")

	keyed["key"] = "no spaces please"
	require.Equal(t, "invalid_input", n.expect(http.StatusBadRequest, "POST", "/sentinels", keyed)["error"])
}

func TestIdempotentWatchOnThreeNodes(t *testing.T) {
	apps := startCluster(t, clusterConfigs(t, 3))
	body := map[string]any{"prUrl": "https://github.com/acme/widgets/pull/7", "sessionId": "me", "provider": "fake"}
	ids := make([]string, 9)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			nd := &node{t: t, app: apps[i%3]}
			resp, raw := nd.req("POST", "/sentinels", body)
			if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
				t.Errorf("POST on node %d: %d %s", i%3+1, resp.StatusCode, raw)
				return
			}
			var out map[string]any
			if err := json.Unmarshal(raw, &out); err == nil {
				ids[i] = out["sentinel"].(map[string]any)["id"].(string)
			}
		}()
	}
	wg.Wait()
	for _, id := range ids {
		require.Equal(t, ids[0], id, "one sentinel for nine watches on three nodes: %v", ids)
	}
}

// A watch auto-selected onto local-gh without gh says so at once.
func TestProviderNotReadyWarnsOverHTTPAndMCP(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no gh
	t.Setenv("GH_TOKEN", "")
	t.Setenv("GITHUB_TOKEN", "")
	n := startNode(t)
	out := n.expect(http.StatusCreated, "POST", "/sentinels", map[string]any{"prUrl": "https://github.com/acme/widgets/pull/7", "sessionId": "me"})
	ws, ok := out["warnings"].([]any)
	require.True(t, ok, "%v", out)
	require.Len(t, ws, 1)
	w := ws[0].(map[string]any)
	require.Equal(t, "provider_not_ready", w["code"])
	require.Equal(t, "local-gh", w["provider"])
	require.Contains(t, w["message"], "gh")
	require.NotEmpty(t, w["fix"])
	id := sentinelID(t, out)
	s := n.expect(http.StatusOK, "GET", "/sentinels/"+id, nil)["sentinel"].(map[string]any)
	require.Len(t, s["warnings"], 1, "the sentinel keeps its warning")

	c := newSEPClient(t, n.app.URL(), n.app.Token)
	res := toolResult(t, c, "sentinel_watch", map[string]any{"prUrl": "https://github.com/acme/widgets/pull/8", "sessionId": "me"})
	require.Len(t, res["warnings"], 1, "%v", res)
	require.Equal(t, "provider_not_ready", res["warnings"].([]any)[0].(map[string]any)["code"])
}

// A repository the credentials do not reach is named at once: the watch is
// made, with repo_unreachable and its fix.
func TestRepoUnreachableWarns(t *testing.T) {
	gh := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"message":"Not Found"}`))
	}))
	t.Cleanup(gh.Close)
	t.Setenv("PATH", t.TempDir())
	t.Setenv("GH_TOKEN", "ghp_unreachable0123456789abcdefXYZ")
	t.Setenv("GITHUB_TOKEN", "")
	t.Setenv("GH_HOST", "")
	n := startNodeWith(t, func(c *app.Config) { c.GitHub.APIURL = gh.URL })
	out := n.expect(http.StatusCreated, "POST", "/sentinels", map[string]any{"prUrl": "https://github.com/acme/private/pull/3", "sessionId": "me", "provider": "local-gh"})
	ws, ok := out["warnings"].([]any)
	require.True(t, ok, "%v", out)
	require.Len(t, ws, 1)
	w := ws[0].(map[string]any)
	require.Equal(t, "repo_unreachable", w["code"])
	require.Contains(t, w["message"], "github:acme/private is not reachable")
	require.Contains(t, w["message"], "HTTP 404")
	require.Contains(t, w["fix"], "GH_TOKEN")
	require.NotContains(t, fmt.Sprint(out), "ghp_unreachable", "the token never shows")
}
