package app_test

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
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

// receiver is a webhook endpoint written from SEP-3415's Standard
// Webhooks profile: it verifies every delivery's signature over the raw
// body with its secret (refusing bad or stale ones), answers the
// verification challenge when echo is set, and records what it accepted.
type receiver struct {
	t      *testing.T
	secret string
	key    []byte
	srv    *httptest.Server

	mu        sync.Mutex
	echo      bool
	fail      int            // answer 500 to this many event deliveries first
	down      bool           // answer 500 to every event delivery
	answer    map[string]int // answer this status to every delivery of an event id
	order     []string       // what was accepted, in order: "event:<id>" or "<type>"
	attempts  map[string]int
	events    []map[string]any
	controls  []map[string]any
	badSigned int
	subIDs    map[string]bool
}

func newReceiver(t *testing.T, echo bool) *receiver {
	key := make([]byte, 32)
	_, err := rand.Read(key)
	require.NoError(t, err)
	r := &receiver{t: t, key: key, secret: "whsec_" + base64.StdEncoding.EncodeToString(key), echo: echo,
		attempts: map[string]int{}, subIDs: map[string]bool{}, answer: map[string]int{}}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) verified(req *http.Request, body []byte) bool {
	id, ts, sigs := req.Header.Get("webhook-id"), req.Header.Get("webhook-timestamp"), req.Header.Get("webhook-signature")
	sec, err := strconv.ParseInt(ts, 10, 64)
	if id == "" || err != nil || time.Since(time.Unix(sec, 0)) > 5*time.Minute || req.Header.Get("X-MCP-Subscription-Id") == "" {
		return false
	}
	m := hmac.New(sha256.New, r.key)
	m.Write([]byte(id + "." + ts + "."))
	m.Write(body)
	want := "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
	for _, s := range strings.Fields(sigs) {
		if hmac.Equal([]byte(s), []byte(want)) {
			return true
		}
	}
	return false
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	defer r.mu.Unlock()
	if req.Method != http.MethodPost || req.Header.Get("Content-Type") != "application/json" || !r.verified(req, body) {
		r.badSigned++
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	var m map[string]any
	require.NoError(r.t, json.Unmarshal(body, &m))
	r.subIDs[req.Header.Get("X-MCP-Subscription-Id")] = true
	if typ, ok := m["type"].(string); ok {
		r.controls = append(r.controls, m)
		r.order = append(r.order, typ)
		require.True(r.t, strings.HasPrefix(req.Header.Get("webhook-id"), "msg_"+typ+"_"))
		if typ == "verification" && r.echo {
			_ = json.NewEncoder(w).Encode(map[string]any{"challenge": m["challenge"]})
		}
		return
	}
	id, _ := m["eventId"].(string)
	require.Equal(r.t, id, req.Header.Get("webhook-id"))
	r.attempts[id]++
	if st, ok := r.answer[id]; ok {
		w.WriteHeader(st)
		return
	}
	if r.down || r.fail > 0 {
		if r.fail > 0 {
			r.fail--
		}
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	r.events = append(r.events, m)
	r.order = append(r.order, "event:"+id)
	w.WriteHeader(http.StatusNoContent)
}

func (r *receiver) snapshot() (events []map[string]any, controls []map[string]any, attempts map[string]int, bad int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	attempts = map[string]int{}
	for k, v := range r.attempts {
		attempts[k] = v
	}
	return append([]map[string]any(nil), r.events...), append([]map[string]any(nil), r.controls...), attempts, r.badSigned
}

func webhookNode(t *testing.T, tune func(*app.Config)) *app.App {
	return mcpEventsNode(t, t.TempDir(), func(c *app.Config) {
		c.MCPEvents.AllowPrivateCallbacks = true
		c.MCPEvents.RetryBackoff = 50 * time.Millisecond
		c.MCPEvents.TTLMin = time.Second
		if tune != nil {
			tune(c)
		}
	})
}

type subscribeResult struct {
	ResultType     string  `json:"resultType"`
	ID             string  `json:"id"`
	RefreshBefore  *string `json:"refreshBefore"`
	Cursor         *string `json:"cursor"`
	Truncated      bool    `json:"truncated"`
	DeliveryStatus *struct {
		Active         bool    `json:"active"`
		LastDeliveryAt *string `json:"lastDeliveryAt"`
		LastError      *string `json:"lastError"`
		FailedSince    *string `json:"failedSince"`
	} `json:"deliveryStatus"`
}

func (c *sepClient) subscribe(name string, args map[string]any, url, secret string, ttlMs any) (subscribeResult, *rpcError) {
	c.t.Helper()
	m := c.call("events/subscribe", map[string]any{"name": name, "arguments": args,
		"delivery": map[string]any{"mode": "webhook", "url": url, "secret": secret}, "cursor": nil, "ttlMs": ttlMs})
	if m.Error != nil {
		return subscribeResult{}, m.Error
	}
	var r subscribeResult
	require.NoError(c.t, json.Unmarshal(m.Result, &r))
	return r, nil
}

// Webhook: the subscribe verifies the endpoint by the challenge, then the
// node POSTs each event signed as Standard Webhooks says; a 500 is
// retried; a refresh keeps the id and reports deliveryStatus; after
// events/unsubscribe the subscription and its sentinel are gone.
func TestMCPEventsWebhook(t *testing.T) {
	t.Parallel()
	a := webhookNode(t, nil)
	c := newSEPClient(t, a.URL(), a.Token)
	rx := newReceiver(t, true)
	args := fakeArgs("fake:hooked/1")

	sub, e := c.subscribe("sentinel.event", args, rx.srv.URL+"/hooks/a", rx.secret, 600000)
	require.Nil(t, e, "%+v", e)
	require.True(t, strings.HasPrefix(sub.ID, "sub_"))
	require.NotNil(t, sub.RefreshBefore)
	require.NotNil(t, sub.Cursor)
	_, controls, _, bad := rx.snapshot()
	require.Len(t, controls, 1, "one verification challenge before any delivery")
	require.Equal(t, "verification", controls[0]["type"])
	require.Zero(t, bad)
	sen := subscriptionSentinel(t, a.URL(), a.Token, "webhook", "fake:hooked/1")
	require.NotEmpty(t, sen.ID)
	require.Empty(t, sen.Target.SessionID)

	pushFake(t, a.URL(), sen.ID, fakeEvent("w1", "fake:hooked/1", "fake.one"))
	bustest.Eventually(t, 30*time.Second, func() bool { evs, _, _, _ := rx.snapshot(); return len(evs) == 1 }, "the event is POSTed")
	evs, _, _, _ := rx.snapshot()
	require.Equal(t, "w1", evs[0]["eventId"])
	require.Equal(t, "sentinel.event", evs[0]["name"])
	require.NotEmpty(t, evs[0]["cursor"])

	// Retries: the receiver answers 500 twice, then accepts.
	rx.mu.Lock()
	rx.fail = 2
	rx.mu.Unlock()
	pushFake(t, a.URL(), sen.ID, fakeEvent("w2", "fake:hooked/1", "fake.two"))
	bustest.Eventually(t, 30*time.Second, func() bool { evs, _, _, _ := rx.snapshot(); return len(evs) == 2 }, "the event is retried until accepted")
	_, _, attempts, bad := rx.snapshot()
	require.Equal(t, 3, attempts["w2"])
	require.Equal(t, 1, attempts["w1"])
	require.Zero(t, bad, "every delivery verified")

	// Refresh: the same key keeps its id, no new challenge.
	again, e := c.subscribe("sentinel.event", args, rx.srv.URL+"/hooks/a", rx.secret, 600000)
	require.Nil(t, e)
	require.Equal(t, sub.ID, again.ID)
	require.NotNil(t, again.DeliveryStatus)
	require.True(t, again.DeliveryStatus.Active)
	require.NotNil(t, again.DeliveryStatus.LastDeliveryAt)
	_, controls, _, _ = rx.snapshot()
	require.Len(t, controls, 1)

	m := c.call("events/unsubscribe", map[string]any{"name": "sentinel.event", "arguments": args, "delivery": map[string]any{"url": rx.srv.URL + "/hooks/a"}})
	require.Nil(t, m.Error)
	require.Empty(t, subscriptionSentinel(t, a.URL(), a.Token, "webhook", "fake:hooked/1").ID, "nothing routes to it any more")
	m = c.call("events/unsubscribe", map[string]any{"name": "sentinel.event", "arguments": args, "delivery": map[string]any{"url": rx.srv.URL + "/hooks/a"}})
	require.NotNil(t, m.Error)
	require.Equal(t, -32023, m.Error.Code)
	require.Equal(t, "subscription", m.Error.Data["kind"])
}

// A receiver that does not echo the challenge gets no subscription and
// no delivery; bad secrets and URLs are InvalidParams.
func TestMCPEventsWebhookRefusals(t *testing.T) {
	t.Parallel()
	a := webhookNode(t, nil)
	c := newSEPClient(t, a.URL(), a.Token)
	rx := newReceiver(t, false)
	_, e := c.subscribe("sentinel.event", fakeArgs("fake:mute/1"), rx.srv.URL, rx.secret, nil)
	require.NotNil(t, e)
	require.Equal(t, -32027, e.Code)
	require.Equal(t, "challenge_failed", e.Data["reason"])
	require.Empty(t, subscriptionSentinel(t, a.URL(), a.Token, "webhook", "fake:mute/1").ID)

	_, e = c.subscribe("sentinel.event", fakeArgs("fake:mute/1"), rx.srv.URL, "whsec_short", nil)
	require.Equal(t, -32602, e.Code)
	_, e = c.subscribe("sentinel.event", fakeArgs("fake:mute/1"), "ftp://example.com/x", rx.secret, nil)
	require.Equal(t, -32602, e.Code)
}

// Without mcp_events.allow_private_callbacks a loopback callback is
// refused at delivery time (the challenge never leaves), and http is
// InvalidParams.
func TestMCPEventsWebhookSSRF(t *testing.T) {
	t.Parallel()
	a := mcpEventsNode(t, t.TempDir(), nil)
	c := newSEPClient(t, a.URL(), a.Token)
	rx := newReceiver(t, true)
	_, e := c.subscribe("sentinel.event", fakeArgs("fake:ssrf/1"), rx.srv.URL, rx.secret, nil)
	require.Equal(t, -32602, e.Code, "plain http")
	https := strings.Replace(rx.srv.URL, "http://", "https://", 1)
	_, e = c.subscribe("sentinel.event", fakeArgs("fake:ssrf/1"), https, rx.secret, nil)
	require.NotNil(t, e)
	require.Equal(t, -32027, e.Code)
	require.Equal(t, "connection_refused", e.Data["reason"])
	_, controls, _, bad := rx.snapshot()
	require.Empty(t, controls)
	require.Zero(t, bad, "nothing reached the loopback receiver")
}

// A webhook subscription ends at its TTL when not refreshed.
func TestMCPEventsWebhookExpiresAtItsTTL(t *testing.T) {
	t.Parallel()
	a := webhookNode(t, nil)
	c := newSEPClient(t, a.URL(), a.Token)
	rx := newReceiver(t, true)
	sub, e := c.subscribe("sentinel.event", fakeArgs("fake:ttl/1"), rx.srv.URL, rx.secret, 1000)
	require.Nil(t, e)
	rb, err := time.Parse(time.RFC3339Nano, *sub.RefreshBefore)
	require.NoError(t, err)
	require.WithinDuration(t, time.Now().Add(time.Second), rb, 5*time.Second, "the grant is the 1s suggestion (ttl_min)")
	require.NotEmpty(t, subscriptionSentinel(t, a.URL(), a.Token, "webhook", "fake:ttl/1").ID)
	bustest.Eventually(t, 30*time.Second, func() bool {
		return subscriptionSentinel(t, a.URL(), a.Token, "webhook", "fake:ttl/1").ID == ""
	}, "the subscription ends at its TTL")
}
