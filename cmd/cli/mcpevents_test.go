package cli_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/bus/bustest"
	"github.com/agentproto/sentinel/cmd/cli"
)

// stdioClient is an MCP Events client over `sentinel mcp` stdio written
// from SEP-3415 (newline-delimited JSON-RPC; stream notifications routed
// by _meta subscriptionId; notifications/cancelled ends a stream).
type stdioClient struct {
	t  *testing.T
	in io.Writer
	mu sync.Mutex
	// byID receives the response of a request id; notes the notifications
	// of a stream id.
	byID  map[string]chan map[string]any
	notes map[string]chan map[string]any
}

func startBridge(t *testing.T, nodeURL, token string) *stdioClient {
	t.Helper()
	t.Setenv("AGENTPROTO_HOME", t.TempDir())
	t.Setenv("AGENTPROTO_URL", "")
	t.Setenv("AGENTPROTO_TOKEN", token)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- cli.Main(ctx, []string{"mcp", "--session", "s1", "--url", nodeURL}, cli.IO{In: inR, Out: outW, ErrOut: io.Discard})
		_ = outW.Close()
	}()
	c := &stdioClient{t: t, in: inW, byID: map[string]chan map[string]any{}, notes: map[string]chan map[string]any{}}
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 1<<20), 4<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) != nil {
				continue
			}
			if id, ok := m["id"]; ok && m["method"] == nil {
				c.chanFor(c.byID, fmt.Sprint(id)) <- m
				continue
			}
			if p, ok := m["params"].(map[string]any); ok {
				if meta, ok := p["_meta"].(map[string]any); ok {
					if sid, ok := meta["io.modelcontextprotocol/subscriptionId"]; ok {
						c.chanFor(c.notes, fmt.Sprint(sid)) <- m
					}
				}
			}
		}
	}()
	t.Cleanup(func() {
		_ = inW.Close()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Error("the bridge did not stop at the end of stdin")
		}
		cancel()
	})
	return c
}

func (c *stdioClient) chanFor(m map[string]chan map[string]any, id string) chan map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch, ok := m[id]
	if !ok {
		ch = make(chan map[string]any, 64)
		m[id] = ch
	}
	return ch
}

func (c *stdioClient) send(msg map[string]any) {
	raw, err := json.Marshal(msg)
	require.NoError(c.t, err)
	_, err = c.in.Write(append(raw, '\n'))
	require.NoError(c.t, err)
}

// request sends a request of revision 2026-07-28 (revision "" sends none).
func (c *stdioClient) request(id int, method string, params map[string]any, revision string) {
	if params == nil {
		params = map[string]any{}
	}
	if revision != "" {
		params["_meta"] = map[string]any{"io.modelcontextprotocol/protocolVersion": revision,
			"io.modelcontextprotocol/clientCapabilities": map[string]any{}}
	}
	c.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

func (c *stdioClient) wait(ch chan map[string]any, what string) map[string]any {
	c.t.Helper()
	select {
	case m := <-ch:
		return m
	case <-time.After(30 * time.Second):
		c.t.Fatalf("no %s within 30s", what)
		return nil
	}
}

func (c *stdioClient) call(id int, method string, params map[string]any, revision string) map[string]any {
	c.t.Helper()
	c.request(id, method, params, revision)
	return c.wait(c.chanFor(c.byID, fmt.Sprint(id)), method+" answer")
}

// note returns the next notification of stream id other than heartbeats.
func (c *stdioClient) note(id int) map[string]any {
	c.t.Helper()
	for {
		m := c.wait(c.chanFor(c.notes, fmt.Sprint(id)), "notification")
		if m["method"] != "notifications/events/heartbeat" {
			return m
		}
	}
}

func pushFakeEvent(t *testing.T, baseURL, sentinelID, id, subject string) {
	t.Helper()
	body, err := json.Marshal([]map[string]any{{"specversion": "1.0", "id": id, "source": "fake", "type": "fake.one", "subject": subject,
		"time": time.Now().UTC().Format(time.RFC3339Nano), "data": map[string]any{}, "summary": id, "subjects": []string{subject}, "terminal": false}})
	require.NoError(t, err)
	m := hmac.New(sha256.New, []byte("fake-secret"))
	m.Write(body)
	req, err := http.NewRequest(http.MethodPost, baseURL+"/inbound/sentinel-fk-"+strings.ToLower(sentinelID), bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("X-Fake-Signature", "sha256="+hex.EncodeToString(m.Sum(nil)))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Less(t, resp.StatusCode, 300)
}

// mcpEventsSentinel finds the mcp-events sentinel of subject in mode.
func mcpEventsSentinel(t *testing.T, baseURL, token, mode, subject string) string {
	req, err := http.NewRequest(http.MethodGet, baseURL+"/sentinels", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out struct {
		Sentinels []struct {
			ID     string                      `json:"id"`
			Target struct{ Kind, Mode string } `json:"target"`
			Match  []struct{ Subject string }  `json:"match"`
		} `json:"sentinels"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	for _, s := range out.Sentinels {
		if s.Target.Kind == "mcp-events" && s.Target.Mode == mode && len(s.Match) > 0 && s.Match[0].Subject == subject {
			return s.ID
		}
	}
	return ""
}

// Over `sentinel mcp` stdio: discover advertises the extension, an older
// revision gets Method not found, poll bootstraps and returns events after
// its cursor (a tampered one is InvalidParams), and a push stream delivers
// live until notifications/cancelled ends it (and its subscription).
func TestMCPStdioEvents(t *testing.T) {
	node := startAppNode(t)
	c := startBridge(t, node.URL(), node.Token)

	disc := c.call(1, "server/discover", nil, "2026-07-28")
	raw, _ := json.Marshal(disc["result"])
	require.Contains(t, string(raw), `"io.modelcontextprotocol/events"`)

	old := c.call(2, "events/list", nil, "")
	require.NotNil(t, old["error"], "events/* of an earlier revision")
	require.EqualValues(t, -32601, old["error"].(map[string]any)["code"])

	list := c.call(3, "events/list", nil, "2026-07-28")
	raw, _ = json.Marshal(list["result"])
	require.Contains(t, string(raw), `"github.pull_request.activity"`)
	require.Contains(t, string(raw), `"sentinel.event"`)

	args := map[string]any{"subject": "fake:stdio/1", "provider": "fake"}
	boot := c.call(4, "events/poll", map[string]any{"name": "sentinel.event", "arguments": args, "cursor": nil}, "2026-07-28")
	require.Nil(t, boot["error"], "%v", boot["error"])
	cursor := boot["result"].(map[string]any)["cursor"].(string)
	sen := mcpEventsSentinel(t, node.URL(), node.Token, "poll", "fake:stdio/1")
	require.NotEmpty(t, sen)
	pushFakeEvent(t, node.URL(), sen, "s-e1", "fake:stdio/1")
	var events []any
	id := 5
	bustest.Eventually(t, 30*time.Second, func() bool {
		id++
		r := c.call(id, "events/poll", map[string]any{"name": "sentinel.event", "arguments": args, "cursor": cursor}, "2026-07-28")
		require.Nil(t, r["error"])
		events = r["result"].(map[string]any)["events"].([]any)
		return len(events) > 0
	}, "the event comes after the cursor")
	require.Equal(t, "s-e1", events[0].(map[string]any)["eventId"])
	bad := c.call(600, "events/poll", map[string]any{"name": "sentinel.event", "arguments": args, "cursor": cursor + "x"}, "2026-07-28")
	require.EqualValues(t, -32602, bad["error"].(map[string]any)["code"])

	// Push over stdio.
	pargs := map[string]any{"subject": "fake:stdio/2", "provider": "fake"}
	c.request(700, "events/stream", map[string]any{"name": "sentinel.event", "arguments": pargs}, "2026-07-28")
	require.Equal(t, "notifications/events/active", c.note(700)["method"])
	psen := mcpEventsSentinel(t, node.URL(), node.Token, "push", "fake:stdio/2")
	require.NotEmpty(t, psen)
	pushFakeEvent(t, node.URL(), psen, "s-p1", "fake:stdio/2")
	ev := c.note(700)
	require.Equal(t, "notifications/events/event", ev["method"])
	require.Equal(t, "s-p1", ev["params"].(map[string]any)["eventId"])
	// Other requests are served while the stream is open.
	require.Nil(t, c.call(701, "events/list", nil, "2026-07-28")["error"])
	c.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": map[string]any{"requestId": 700}})
	bustest.Eventually(t, 30*time.Second, func() bool {
		return mcpEventsSentinel(t, node.URL(), node.Token, "push", "fake:stdio/2") == ""
	}, "cancelling the stream ends its subscription")
}
