package node_test

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/bus/bustest"
	"github.com/agentproto/sentinel/providers/adapter/adaptertest"
)

// adapterEntry finds slug in a GET /adapters answer.
func adapterEntry(t *testing.T, a answer, slug string) map[string]any {
	t.Helper()
	list, _ := a.body["adapters"].([]any)
	for _, x := range list {
		if m, _ := x.(map[string]any); m["slug"] == slug {
			return m
		}
	}
	return nil
}

// TestThirdPartyAdapterOnANode: adapters in adapters.paths are discovered
// and listed beside the built-ins (a broken one as unavailable, without
// failing or blocking the listing), set up through the API, watched,
// polled by the node and delivered through the same pipeline into the
// session's inbox; a hung adapter's sentinel beside them costs a bounded
// call and never stops the others' deliveries. The token the adapter is
// given never reaches the node's log.
func TestThirdPartyAdapterOnANode(t *testing.T) {
	bin := adaptertest.Build(t)
	dir := t.TempDir()
	adaptertest.Install(t, bin, dir, "feed")
	adaptertest.Install(t, bin, dir, "broken")
	adaptertest.Install(t, bin, dir, "hung")
	feed := filepath.Join(t.TempDir(), "feed.jsonl")
	hungFeed := filepath.Join(t.TempDir(), "hung.jsonl")
	const token = "feed-token-0123456789"
	n := startNode(t, t.TempDir(), "AGENTPROTO_ADAPTERS_PATHS="+dir, "AGENTPROTO_ADAPTERS_NO_PATH=true",
		"AGENTPROTO_ADAPTERS_CALL_TIMEOUT=2s", "AGENTPROTO_ADAPTERS_RESTART_MAX=2s",
		"FEED_FEED="+feed, "BROKEN_MODE="+adaptertest.ModeGarbage, "HUNG_MODE="+adaptertest.ModeHangPoll, "HUNG_FEED="+hungFeed)

	list := n.do("GET", "/adapters", nil, n.token)
	require.Equal(t, http.StatusOK, list.status, list.raw)
	require.NotNil(t, adapterEntry(t, list, "local-gh"), "the built-ins are listed beside the adapters")
	f := adapterEntry(t, list, "feed")
	require.NotNil(t, f, list.raw)
	require.Equal(t, "available", f["status"], "no token yet: %v", f)
	require.Equal(t, "1.0.0", f["version"])
	b := adapterEntry(t, list, "broken")
	require.Equal(t, "unavailable", b["status"], list.raw)
	require.Contains(t, fmt.Sprint(b["info"]), "unreadable output")

	setup := n.do("POST", "/adapters/feed/setup", map[string]any{"fields": map[string]string{"token": token}}, n.token)
	require.Equal(t, http.StatusOK, setup.status, setup.raw)
	require.NotContains(t, setup.raw, token)
	refused := n.do("POST", "/adapters/hung/setup", map[string]any{"fields": map[string]string{"token": "reject-me"}}, n.token)
	require.Equal(t, http.StatusBadRequest, refused.status, refused.raw)
	require.Contains(t, refused.raw, "invalid_setup")
	require.Equal(t, http.StatusOK, n.do("POST", "/adapters/hung/setup", map[string]any{"fields": map[string]string{"token": token}}, n.token).status)
	list = n.do("GET", "/adapters", nil, n.token)
	require.Equal(t, "ready", adapterEntry(t, list, "feed")["status"], list.raw)

	watch := n.do("POST", "/sentinels", map[string]any{"subject": "feed:orders", "sessionId": "ad-s1", "provider": "feed", "until": "never"}, n.token)
	require.Equal(t, http.StatusCreated, watch.status, watch.raw)
	hung := n.do("POST", "/sentinels", map[string]any{"subject": "feed:stuck", "sessionId": "ad-s2", "provider": "hung", "until": "never"}, n.token)
	require.Equal(t, http.StatusCreated, hung.status, hung.raw)

	for round := range 2 {
		id := fmt.Sprintf("order-%d", round)
		adaptertest.WriteFeed(t, feed, adaptertest.Line{Subject: "feed:orders", Type: "feed.order.created", ID: id, Summary: "order " + id})
		poll := n.do("POST", "/sentinels/poll", map[string]any{}, n.token)
		require.Equal(t, http.StatusOK, poll.status, poll.raw)
		bustest.Eventually(t, 30*time.Second, func() bool {
			in := n.do("GET", "/sessions/ad-s1/inbox", nil, n.token)
			msgs, _ := in.body["messages"].([]any)
			return len(msgs) == round+1
		}, "the adapter's event %s in the inbox", id)
	}
	in := n.do("GET", "/sessions/ad-s1/inbox", nil, n.token)
	require.Contains(t, in.raw, "order order-1")

	sen := n.do("GET", "/sentinels/"+hung.body["sentinel"].(map[string]any)["id"].(string), nil, n.token)
	lastError, _ := sen.body["sentinel"].(map[string]any)["lastError"].(string)
	require.True(t, strings.Contains(lastError, "adapter call timed out") || strings.Contains(lastError, "adapter unavailable"),
		"the hung adapter's failure is the sentinel's lastError: %s", sen.raw)
	require.NotContains(t, n.logs.String(), token, "the adapter's token never reaches the node's log")
	require.True(t, strings.Contains(n.logs.String(), "polling with token [redacted]"), "the adapter's stderr is logged, redacted")
}
