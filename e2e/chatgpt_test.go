package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/bus/bustest"
	"github.com/agentproto/sentinel/e2e/e2etest"
)

// chatgptHook is a webhook endpoint as ChatGPT runs one: it answers the
// verification challenge, checks the Standard Webhooks signature of every
// POST, refuses bodies over 256 KiB (413), and keeps what it accepted.
type chatgptHook struct {
	t      *testing.T
	key    []byte
	secret string
	srv    *httptest.Server

	mu       sync.Mutex
	events   []map[string]any
	sizes    []int
	controls []string
	bad      int
}

func newChatGPTHook(t *testing.T) *chatgptHook {
	key := make([]byte, 32)
	_, err := rand.Read(key)
	require.NoError(t, err)
	h := &chatgptHook{t: t, key: key, secret: "whsec_" + base64.StdEncoding.EncodeToString(key)}
	h.srv = httptest.NewServer(http.HandlerFunc(h.serve))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *chatgptHook) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(body) > 256<<10 {
		h.bad++
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		return
	}
	id, ts := r.Header.Get("webhook-id"), r.Header.Get("webhook-timestamp")
	mac := hmac.New(sha256.New, h.key)
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write(body)
	want := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	sec, err := strconv.ParseInt(ts, 10, 64)
	signed := err == nil && time.Since(time.Unix(sec, 0)) < 5*time.Minute
	found := false
	for _, s := range strings.Fields(r.Header.Get("webhook-signature")) {
		found = found || hmac.Equal([]byte(s), []byte(want))
	}
	if !signed || !found {
		h.bad++
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	var m map[string]any
	if json.Unmarshal(body, &m) != nil {
		h.bad++
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	if typ, ok := m["type"].(string); ok {
		h.controls = append(h.controls, typ)
		if typ == "verification" {
			_ = json.NewEncoder(w).Encode(map[string]any{"challenge": m["challenge"]})
		}
		return
	}
	h.events = append(h.events, m)
	h.sizes = append(h.sizes, len(body))
	w.WriteHeader(http.StatusNoContent)
}

func (h *chatgptHook) snapshot() ([]map[string]any, []int, []string, int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]map[string]any(nil), h.events...), append([]int(nil), h.sizes...), append([]string(nil), h.controls...), h.bad
}

// chatgptClient speaks MCP as ChatGPT does: the 2025-03-26 initialize
// over streamable HTTP, then requests on its Mcp-Session-Id without a
// protocol revision in _meta or headers.
type chatgptClient struct {
	t       *testing.T
	url     string
	token   string
	session string
}

func (c *chatgptClient) post(msg map[string]any) (int, map[string]any, http.Header) {
	c.t.Helper()
	raw, err := json.Marshal(msg)
	require.NoError(c.t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url+"/mcp", bytes.NewReader(raw))
	require.NoError(c.t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+c.token)
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(c.t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(c.t, err)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(bytes.NewReader(body))
		sc.Buffer(make([]byte, 0, 64<<10), 8<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				body = []byte(d)
			}
		}
	}
	var out map[string]any
	if len(bytes.TrimSpace(body)) > 0 {
		require.NoErrorf(c.t, json.Unmarshal(body, &out), "answer %q", body)
	}
	return resp.StatusCode, out, resp.Header
}

func (c *chatgptClient) call(id int, method string, params map[string]any) map[string]any {
	c.t.Helper()
	_, out, _ := c.post(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	return out
}

// TestChatGPTShapedMCPEvents drives the real binary the way ChatGPT, the
// shipping MCP Events client, does: initialize of 2025-03-26 reading the
// top-level capabilities.events, events/* without a revision on its
// session, a webhook subscription verified by challenge, one signed
// event per POST, every body under 256 KiB (a large event clipped and
// saying so), a refresh before the expiry keeping the subscription, a
// node restart delivering nothing twice.
func TestChatGPTShapedMCPEvents(t *testing.T) {
	home := t.TempDir()
	feed := filepath.Join(home, "feed.jsonl")
	node := e2etest.Start(t, binary, home, "AGENTPROTO_TESTING_FAKE_FEED="+feed,
		"AGENTPROTO_MCP_EVENTS_ALLOW_PRIVATE_CALLBACKS=true", "AGENTPROTO_MCP_EVENTS_TTL_MIN=1s")
	t.Cleanup(func() {
		_, _ = node.Stop(15 * time.Second)
		if t.Failed() {
			t.Logf("node logs:\n%s", node.Logs.String())
		}
	})
	n := &surfaceNode{Node: node, t: t, home: home, feed: feed, url: node.URL, token: node.Token}
	c := &chatgptClient{t: t, url: n.url, token: n.token}

	_, init, hdr := c.post(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
		"protocolVersion": "2025-03-26", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "openai-mcp", "version": "1.0.0"}}})
	require.Equal(t, "2025-03-26", dig(init, "result", "protocolVersion"), init)
	require.Equal(t, map[string]any{}, dig(init, "result", "capabilities", "events"), "the top-level spelling ChatGPT reads: %v", init)
	require.Equal(t, map[string]any{}, dig(init, "result", "capabilities", "extensions", "io.modelcontextprotocol/events"), "and the SEP's")
	c.session = hdr.Get("Mcp-Session-Id")
	require.NotEmpty(t, c.session)
	code, _, _ := c.post(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	require.Equal(t, http.StatusAccepted, code)

	list := c.call(2, "events/list", map[string]any{})
	require.Nil(t, list["error"], list)
	require.NotEmpty(t, dig(list, "result", "events"))

	hook := newChatGPTHook(t)
	const subject = "github:acme/chat#1"
	args := map[string]any{"subject": subject, "provider": "fake"}
	subscribe := func(id int) map[string]any {
		m := c.call(id, "events/subscribe", map[string]any{"name": "sentinel.event", "arguments": args,
			"delivery": map[string]any{"mode": "webhook", "url": hook.srv.URL + "/chatgpt", "secret": hook.secret}, "ttlMs": 60000})
		require.Nil(t, m["error"], m)
		return m["result"].(map[string]any)
	}
	sub := subscribe(3)
	require.True(t, strings.HasPrefix(sub["id"].(string), "sub_"), sub)
	_, _, controls, _ := hook.snapshot()
	require.Equal(t, []string{"verification"}, controls, "one challenge before any delivery")
	firstRefresh, err := time.Parse(time.RFC3339Nano, sub["refreshBefore"].(string))
	require.NoError(t, err)

	// A small event and one far over 256 KiB: one signed POST each, every
	// body under the cap, the large one clipped and saying so.
	small := n.emitEvent(subject, "github.check_suite.completed", false, "summary", "CI passed")
	big := n.emitEvent(subject, "github.check_suite.completed", false, "summary", "CI failed with a long log",
		"data", map[string]any{"log": strings.Repeat("x", 400<<10)})
	require.Equal(t, exitOK, n.runCLI("", "poll").Code)
	bustest.Eventually(t, 60*time.Second, func() bool { evs, _, _, _ := hook.snapshot(); return len(evs) >= 2 }, "both events are POSTed")
	evs, sizes, _, bad := hook.snapshot()
	require.Zero(t, bad, "every POST signed and under 256 KiB")
	require.Len(t, evs, 2, "one event per POST")
	require.Equal(t, small, evs[0]["eventId"])
	require.Equal(t, big, evs[1]["eventId"])
	for _, s := range sizes {
		require.Less(t, s, 256<<10)
	}
	require.Equal(t, true, dig(evs[1], "data", "data", "truncated"), evs[1])
	require.Contains(t, dig(evs[1], "data", "data", "reason"), "payload cap")
	require.Equal(t, "CI failed with a long log", dig(evs[1], "data", "summary"))

	// A refresh before the expiry keeps the subscription (same id, no new
	// challenge) and moves its expiry on; events keep coming.
	again := subscribe(4)
	require.Equal(t, sub["id"], again["id"])
	secondRefresh, err := time.Parse(time.RFC3339Nano, again["refreshBefore"].(string))
	require.NoError(t, err)
	require.False(t, secondRefresh.Before(firstRefresh))
	_, _, controls, _ = hook.snapshot()
	require.Equal(t, []string{"verification"}, controls)
	third := n.emitEvent(subject, "github.check_suite.completed", false, "summary", hostileSummary)
	require.Equal(t, exitOK, n.runCLI("", "poll").Code)
	bustest.Eventually(t, 60*time.Second, func() bool { evs, _, _, _ := hook.snapshot(); return len(evs) >= 3 }, "the refreshed subscription delivers")
	evs, _, _, bad = hook.snapshot()
	require.Equal(t, third, evs[2]["eventId"])
	require.Equal(t, hostileSummary, dig(evs[2], "data", "summary"), "PR text is JSON data, escaped by the encoding, never markup")
	require.Zero(t, bad)

	// The node restarts: nothing delivered is POSTed again, the next event
	// comes once.
	_, err = node.Stop(15 * time.Second)
	require.NoError(t, err)
	node = e2etest.Start(t, binary, home, "AGENTPROTO_TESTING_FAKE_FEED="+feed,
		"AGENTPROTO_MCP_EVENTS_ALLOW_PRIVATE_CALLBACKS=true", "AGENTPROTO_MCP_EVENTS_TTL_MIN=1s")
	n.Node, n.url, n.token = node, node.URL, node.Token
	fourth := n.emitEvent(subject, "github.check_suite.completed", false, "summary", "after the restart")
	require.Equal(t, exitOK, n.runCLI("", "poll").Code)
	bustest.Eventually(t, 60*time.Second, func() bool { evs, _, _, _ := hook.snapshot(); return len(evs) >= 4 }, "delivered after the restart")
	evs, _, _, bad = hook.snapshot()
	require.Zero(t, bad)
	ids := []any{}
	for _, e := range evs {
		ids = append(ids, e["eventId"])
	}
	require.Equal(t, []any{small, big, third, fourth}, ids, "each event once, in order")

	// An older initialize (not ChatGPT's) keeps the SEP's rule: no events/*.
	other := &chatgptClient{t: t, url: node.URL, token: node.Token}
	_, _, hdr = other.post(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
		"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "x", "version": "1"}}})
	other.session = hdr.Get("Mcp-Session-Id")
	m := other.call(2, "events/list", map[string]any{})
	require.EqualValues(t, -32601, dig(m, "error", "code"), m)
}
