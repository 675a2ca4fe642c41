package app_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Issue 29 part 4 through the HTTP API and MCP: a sentinel with a batchMs
// shows a burst as one digest (the node's flusher ends the window), its
// view says batchMs, and a bad batchMs is a named error.
func TestDigestOverHTTPAndMCP(t *testing.T) {
	t.Parallel()
	n := startNode(t)
	c := newSEPClient(t, n.app.URL(), n.app.Token)
	out := n.expect(http.StatusCreated, "POST", "/sentinels", map[string]any{"subject": "github:acme/widgets#7", "sessionId": "s1", "provider": "fake", "types": []string{"*"}, "batchMs": 200})
	viaHTTP := sentinelID(t, out)
	require.Equal(t, float64(200), out["sentinel"].(map[string]any)["batchMs"])
	res := toolResult(t, c, "sentinel_watch", map[string]any{"subject": "github:acme/widgets#8", "sessionId": "s2", "provider": "fake", "types": []string{"*"}, "batchMs": 200})
	viaMCP := sentinelID(t, res)
	require.Equal(t, float64(200), res["sentinel"].(map[string]any)["batchMs"])
	require.Equal(t, float64(200), n.expect(http.StatusOK, "GET", "/sentinels/"+viaMCP, nil)["sentinel"].(map[string]any)["batchMs"])

	for _, w := range []struct{ id, subject, session string }{{viaHTTP, "github:acme/widgets#7", "s1"}, {viaMCP, "github:acme/widgets#8", "s2"}} {
		var evs []map[string]any
		for i := 0; i < 5; i++ {
			evs = append(evs, fakeEvent(fmt.Sprintf("evt_%s_%d", w.session, i), w.subject, "github.check_run.completed"))
		}
		pushFake(t, n.app.URL(), w.id, evs...)
		var msgs []any
		require.Eventually(t, func() bool {
			msgs = n.expect(http.StatusOK, "GET", "/sessions/"+w.session+"/inbox?limit=50", nil)["messages"].([]any)
			return len(msgs) > 0
		}, 30*time.Second, 50*time.Millisecond, "the digest of %s", w.session)
		require.Len(t, msgs, 1, "one message for the burst")
		m := msgs[0].(map[string]any)
		require.Contains(t, m["text"], "5 events on "+w.subject)
		raw, _ := json.Marshal(m["data"])
		var d struct {
			Digest bool             `json:"digest"`
			Events []map[string]any `json:"events"`
		}
		require.NoError(t, json.Unmarshal(raw, &d))
		require.True(t, d.Digest)
		require.Len(t, d.Events, 5, "every event in the data")
		mcpMsgs := toolResult(t, c, "inbox_read", map[string]any{"sessionId": w.session, "limit": 50})["messages"].([]any)
		require.Len(t, mcpMsgs, 1)
	}

	bad := n.expect(http.StatusBadRequest, "POST", "/sentinels", map[string]any{"subject": "github:acme/widgets#9", "sessionId": "s1", "provider": "fake", "batchMs": 600001})
	raw, _ := json.Marshal(bad)
	require.Contains(t, string(raw), "invalid_batch")
	bad = n.expect(http.StatusBadRequest, "POST", "/sentinels", map[string]any{"subject": "github:acme/widgets#9", "sessionId": "s1", "provider": "fake", "batchMs": -1})
	raw, _ = json.Marshal(bad)
	require.Contains(t, string(raw), "invalid_batch")
	res = toolResult(t, c, "sentinel_watch", map[string]any{"subject": "github:acme/widgets#9", "sessionId": "s1", "provider": "fake", "batchMs": 700000})
	raw, _ = json.Marshal(res)
	require.Contains(t, string(raw), "invalid_batch")
}
