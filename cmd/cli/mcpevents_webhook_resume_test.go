package cli_test

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/bus/bustest"
	"github.com/agentproto/sentinel/runtime/app"
)

const rev = "2026-07-28"

// mcpEventsAppNode starts a node on home with the fake provider and tune.
func mcpEventsAppNode(t *testing.T, home string, tune func(*app.Config)) *app.App {
	t.Helper()
	cfg := app.DefaultConfig()
	cfg.Home = home
	cfg.Listen = "127.0.0.1:0"
	cfg.NATS.SyncAlways = false
	cfg.Testing.FakeProvider = true
	cfg.MCPEvents.Sweep = 100 * time.Millisecond
	if tune != nil {
		tune(&cfg)
	}
	node, err := app.New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	require.NoError(t, node.Start(context.Background()))
	t.Cleanup(func() { _ = node.Stop(context.Background()) })
	return node
}

// hookReceiver is a webhook endpoint written from SEP-3415's Standard
// Webhooks profile: every POST's signature is checked over the raw body
// (a bad one is counted and refused), the verification challenge is
// echoed when echo is set, and what was accepted is kept in order.
type hookReceiver struct {
	key    []byte
	secret string
	srv    *httptest.Server

	mu       sync.Mutex
	echo     bool
	fail     int
	bad      int
	accepted []map[string]any
	attempts map[string]int
}

func newHookReceiver(t *testing.T, echo bool) *hookReceiver {
	key := make([]byte, 32)
	_, err := rand.Read(key)
	require.NoError(t, err)
	r := &hookReceiver{key: key, secret: "whsec_" + base64.StdEncoding.EncodeToString(key), echo: echo, attempts: map[string]int{}}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *hookReceiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	defer r.mu.Unlock()
	id, ts := req.Header.Get("webhook-id"), req.Header.Get("webhook-timestamp")
	sec, err := strconv.ParseInt(ts, 10, 64)
	m := hmac.New(sha256.New, r.key)
	m.Write([]byte(id + "." + ts + "."))
	m.Write(body)
	want := "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
	ok := err == nil && time.Since(time.Unix(sec, 0)) < 5*time.Minute && req.Header.Get("X-MCP-Subscription-Id") != ""
	signed := false
	for _, s := range strings.Fields(req.Header.Get("webhook-signature")) {
		signed = signed || hmac.Equal([]byte(s), []byte(want))
	}
	var msg map[string]any
	if !ok || !signed || json.Unmarshal(body, &msg) != nil {
		r.bad++
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	if typ, isControl := msg["type"].(string); isControl {
		if typ == "verification" {
			if r.echo {
				_ = json.NewEncoder(w).Encode(map[string]any{"challenge": msg["challenge"]})
			}
			return
		}
		r.accepted = append(r.accepted, msg)
		return
	}
	eid, _ := msg["eventId"].(string)
	r.attempts[eid]++
	if r.fail > 0 {
		r.fail--
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	r.accepted = append(r.accepted, msg)
	w.WriteHeader(http.StatusNoContent)
}

func (r *hookReceiver) got() ([]map[string]any, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]map[string]any(nil), r.accepted...), r.bad
}

func (r *hookReceiver) has(eventID string) bool {
	evs, _ := r.got()
	for _, e := range evs {
		if e["eventId"] == eventID {
			return true
		}
	}
	return false
}

func errCode(t *testing.T, m map[string]any) float64 {
	t.Helper()
	e, ok := m["error"].(map[string]any)
	require.True(t, ok, "an error answer: %v", m)
	return e["code"].(float64)
}

func result(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	require.Nil(t, m["error"], "%v", m["error"])
	return m["result"].(map[string]any)
}

// Webhook over `sentinel mcp` stdio, with a loopback receiver
// (mcp_events.allow_private_callbacks): a receiver that does not echo the
// challenge gets nothing; one that does gets every event signed, a 500 is
// retried, a refresh keeps the id and reports deliveryStatus, nothing
// comes after events/unsubscribe, and an unrefreshed subscription ends
// at its TTL with a terminated envelope.
func TestMCPStdioEventsWebhook(t *testing.T) {
	node := mcpEventsAppNode(t, t.TempDir(), func(c *app.Config) {
		c.MCPEvents.AllowPrivateCallbacks = true
		c.MCPEvents.RetryBackoff = 50 * time.Millisecond
		c.MCPEvents.TTLMin = time.Second
	})
	c := startBridge(t, node.URL(), node.Token)
	args := map[string]any{"subject": "fake:stdio-hook/1", "provider": "fake"}
	subscribe := func(id int, rx *hookReceiver, ttl any) map[string]any {
		return c.call(id, "events/subscribe", map[string]any{"name": "sentinel.event", "arguments": args, "cursor": nil, "ttlMs": ttl,
			"delivery": map[string]any{"mode": "webhook", "url": rx.srv.URL, "secret": rx.secret}}, rev)
	}

	mute := newHookReceiver(t, false)
	refused := subscribe(1, mute, 600000)
	require.EqualValues(t, -32027, errCode(t, refused))
	require.Equal(t, "challenge_failed", refused["error"].(map[string]any)["data"].(map[string]any)["reason"])
	require.Empty(t, mcpEventsSentinel(t, node.URL(), node.Token, "webhook", "fake:stdio-hook/1"), "no subscription, nothing delivered")

	rx := newHookReceiver(t, true)
	sub := result(t, subscribe(2, rx, 600000))
	subID := sub["id"].(string)
	require.True(t, strings.HasPrefix(subID, "sub_"))
	require.NotEmpty(t, sub["refreshBefore"])
	sen := mcpEventsSentinel(t, node.URL(), node.Token, "webhook", "fake:stdio-hook/1")
	require.NotEmpty(t, sen)

	rx.mu.Lock()
	rx.fail = 1
	rx.mu.Unlock()
	pushFakeEvent(t, node.URL(), sen, "sh-1", "fake:stdio-hook/1")
	bustest.Eventually(t, 30*time.Second, func() bool { return rx.has("sh-1") }, "the event is POSTed, retried after a 500")
	rx.mu.Lock()
	require.Equal(t, 2, rx.attempts["sh-1"])
	rx.mu.Unlock()

	again := result(t, subscribe(3, rx, 600000))
	require.Equal(t, subID, again["id"])
	status := again["deliveryStatus"].(map[string]any)
	require.Equal(t, true, status["active"])
	require.NotEmpty(t, status["lastDeliveryAt"])

	// An event being retried when the client unsubscribes never arrives.
	rx.mu.Lock()
	rx.fail = 1000
	rx.mu.Unlock()
	pushFakeEvent(t, node.URL(), sen, "sh-2", "fake:stdio-hook/1")
	bustest.Eventually(t, 30*time.Second, func() bool { rx.mu.Lock(); defer rx.mu.Unlock(); return rx.attempts["sh-2"] >= 1 }, "the second event is attempted")
	un := c.call(4, "events/unsubscribe", map[string]any{"name": "sentinel.event", "arguments": args, "delivery": map[string]any{"url": rx.srv.URL}}, rev)
	require.Nil(t, un["error"])
	require.Empty(t, mcpEventsSentinel(t, node.URL(), node.Token, "webhook", "fake:stdio-hook/1"), "nothing routes to it any more")
	require.EqualValues(t, -32023, errCode(t, c.call(5, "events/unsubscribe",
		map[string]any{"name": "sentinel.event", "arguments": args, "delivery": map[string]any{"url": rx.srv.URL}}, rev)))

	rx.mu.Lock()
	rx.fail = 0
	rx.mu.Unlock()

	// Expiry at the TTL: a 1 s grant, never refreshed (a new subscription
	// of the same key, starting from now: the unsubscribed one's pending
	// event is not its own).
	short := result(t, subscribe(6, rx, 1000))
	require.NotEmpty(t, short["refreshBefore"])
	bustest.Eventually(t, 30*time.Second, func() bool {
		evs, _ := rx.got()
		return len(evs) > 0 && evs[len(evs)-1]["type"] == "terminated"
	}, "the subscription ends at its TTL with a terminated envelope")
	require.Empty(t, mcpEventsSentinel(t, node.URL(), node.Token, "webhook", "fake:stdio-hook/1"))
	evs, bad := rx.got()
	require.Zero(t, bad, "every delivery verified")
	require.Len(t, evs, 2, "one event, one terminated: nothing after the unsubscribe")
	require.False(t, rx.has("sh-2"))
}

// Poll and push over `sentinel mcp` stdio across a node restart: a cursor
// taken before the restart resumes on the restarted node (through a new
// bridge: both sides restarted), a push stream replays from a cursor,
// and a cursor whose events retention dropped says truncated.
func TestMCPStdioEventsResumeAndTruncated(t *testing.T) {
	home := t.TempDir()
	tune := func(c *app.Config) { c.MCPEvents.PushLinger = time.Hour }
	node := mcpEventsAppNode(t, home, tune)
	c := startBridge(t, node.URL(), node.Token)
	args := map[string]any{"subject": "fake:stdio-resume/1", "provider": "fake"}
	boot := result(t, c.call(1, "events/poll", map[string]any{"name": "sentinel.event", "arguments": args, "cursor": nil}, rev))
	cursor := boot["cursor"].(string)
	sen := mcpEventsSentinel(t, node.URL(), node.Token, "poll", "fake:stdio-resume/1")
	pargs := map[string]any{"subject": "fake:stdio-resume/2", "provider": "fake"}
	c.request(2, "events/stream", map[string]any{"name": "sentinel.event", "arguments": pargs, "cursor": nil}, rev)
	active := c.note(2)
	require.Equal(t, "notifications/events/active", active["method"])
	pcursor := active["params"].(map[string]any)["cursor"].(string)
	psen := mcpEventsSentinel(t, node.URL(), node.Token, "push", "fake:stdio-resume/2")
	c.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": map[string]any{"requestId": 2}})

	pushFakeEvent(t, node.URL(), sen, "sr-1", "fake:stdio-resume/1")
	pushFakeEvent(t, node.URL(), psen, "sr-p1", "fake:stdio-resume/2")
	bustest.Eventually(t, 30*time.Second, func() bool {
		s, err := node.Bus.Stream(context.Background(), "SENTINEL_MCP_EVENTS")
		require.NoError(t, err)
		info, err := s.Info(context.Background())
		require.NoError(t, err)
		return info.State.Msgs >= 2
	}, "both events reach the feeds")
	require.NoError(t, node.Stop(context.Background()))

	node = mcpEventsAppNode(t, home, tune)
	c = startBridge(t, node.URL(), node.Token)
	r := result(t, c.call(3, "events/poll", map[string]any{"name": "sentinel.event", "arguments": args, "cursor": cursor}, rev))
	evs := r["events"].([]any)
	require.Len(t, evs, 1)
	require.Equal(t, "sr-1", evs[0].(map[string]any)["eventId"])
	require.Equal(t, false, r["truncated"])

	c.request(4, "events/stream", map[string]any{"name": "sentinel.event", "arguments": pargs, "cursor": pcursor}, rev)
	active = c.note(4)
	require.Equal(t, "notifications/events/active", active["method"])
	require.Equal(t, false, active["params"].(map[string]any)["truncated"])
	ev := c.note(4)
	require.Equal(t, "notifications/events/event", ev["method"])
	require.Equal(t, "sr-p1", ev["params"].(map[string]any)["eventId"], "the stream replays what came after its cursor")
	c.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": map[string]any{"requestId": 4}})

	// Retention (2 s on a node restarted once more: a shorter retention
	// on the first restart could drop the events before a slow restart
	// had served them) drops the events: the bootstrap cursor now says
	// truncated.
	require.NoError(t, node.Stop(context.Background()))
	node = mcpEventsAppNode(t, home, func(c *app.Config) { tune(c); c.MCPEvents.Retention = 2 * time.Second })
	c = startBridge(t, node.URL(), node.Token)
	bustest.Eventually(t, 30*time.Second, func() bool {
		s, err := node.Bus.Stream(context.Background(), "SENTINEL_MCP_EVENTS")
		require.NoError(t, err)
		info, err := s.Info(context.Background())
		require.NoError(t, err)
		return info.State.Msgs == 0
	}, "retention drops the events")
	r = result(t, c.call(5, "events/poll", map[string]any{"name": "sentinel.event", "arguments": args, "cursor": cursor}, rev))
	require.Empty(t, r["events"])
	require.Equal(t, true, r["truncated"])
}
