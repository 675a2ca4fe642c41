package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/runtime/app"
)

// openInboxStream opens GET /sessions/{id}/messages/stream and returns
// once the node answered its headers (the slot is taken); cleanup closes
// it.
func openInboxStream(t *testing.T, n *node, session string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, n.app.URL()+"/sessions/"+session+"/inbox/stream", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+n.app.Token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	require.Equal(t, http.StatusOK, resp.StatusCode)
}

// toolResult calls an MCP tool over stateless streamable HTTP and returns
// the JSON object of its text result.
func toolResult(t *testing.T, c *sepClient, tool string, args map[string]any) map[string]any {
	t.Helper()
	_, raw := c.body("tools/call", map[string]any{"name": tool, "arguments": args}, sepRevision)
	req, err := http.NewRequest(http.MethodPost, c.url, bytes.NewReader(raw))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Mcp-Protocol-Version", sepRevision)
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", tool)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var m rpcMsg
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		for msg := range sseMessages(resp.Body) {
			m = msg
		}
	} else {
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(b, &m), "HTTP %d: %s", resp.StatusCode, b)
	}
	require.Nil(t, m.Error, "tools/call answered an error: %+v", m.Error)
	var res struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	require.NoError(t, json.Unmarshal(m.Result, &res), string(m.Result))
	require.NotEmpty(t, res.Content)
	var out map[string]any
	require.NoError(t, json.Unmarshal([]byte(res.Content[0].Text), &out), res.Content[0].Text)
	return out
}

// The review's attack: inbox_wait over MCP and events/stream held
// connections the stream caps did not count. Both count now, against the
// same caps as the inbox SSE streams and ?wait= long-polls.
func TestMCPWaitsAndEventStreamsCountAgainstTheStreamCaps(t *testing.T) {
	t.Parallel()
	n := startNodeWith(t, func(c *app.Config) { c.MaxStreams = 3; c.MaxStreamsPerSession = 2 })
	c := newSEPClient(t, n.app.URL(), n.app.Token)

	openInboxStream(t, n, "s1")
	openInboxStream(t, n, "s1")
	out := toolResult(t, c, "inbox_wait", map[string]any{"sessionId": "s1", "timeoutMs": 1000})
	require.Equal(t, false, out["ok"], "the session's third wait is over max_streams_per_session: %v", out)
	require.Equal(t, "too_many_streams", out["error"])

	openInboxStream(t, n, "s2")
	out = toolResult(t, c, "inbox_wait", map[string]any{"sessionId": "s3", "timeoutMs": 1000})
	require.Equal(t, "too_many_streams", out["error"], "the node's fourth is over max_streams: %v", out)

	m := c.call("events/stream", map[string]any{"name": "sentinel.event", "arguments": map[string]any{"subject": "github:acme/widgets#1", "provider": "fake"}})
	require.NotNil(t, m.Error, "events/stream over max_streams is refused: %s", m.Result)
	require.Equal(t, -32025, m.Error.Code, "ResourceExhausted")
	require.Equal(t, "streams", m.Error.Data["limit"])
}
