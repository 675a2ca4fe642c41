package app_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/bus/bustest"
	"github.com/agentproto/sentinel/runtime/app"
)

// set changes the receiver's behaviour under its lock.
func (r *receiver) set(fn func(*receiver)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fn(r)
}

// controlsOf returns the accepted control envelopes of type typ.
func (r *receiver) controlsOf(typ string) []map[string]any {
	_, controls, _, _ := r.snapshot()
	var out []map[string]any
	for _, c := range controls {
		if c["type"] == typ {
			out = append(out, c)
		}
	}
	return out
}

// terminated waits for the one terminated envelope and returns it with its
// error object.
func (r *receiver) terminated(t *testing.T, why string) (envelope, errObj map[string]any) {
	t.Helper()
	bustest.Eventually(t, 30*time.Second, func() bool { return len(r.controlsOf("terminated")) == 1 }, why)
	envelope = r.controlsOf("terminated")[0]
	return envelope, envelope["error"].(map[string]any)
}

func (r *receiver) accepted() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.order...)
}

func (r *receiver) attemptsOf(id string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.attempts[id]
}

// subscribeWith calls events/subscribe with params as given.
func (c *sepClient) subscribeWith(params map[string]any) (subscribeResult, *rpcError) {
	c.t.Helper()
	m := c.call("events/subscribe", params)
	if m.Error != nil {
		return subscribeResult{}, m.Error
	}
	var r subscribeResult
	require.NoError(c.t, json.Unmarshal(m.Result, &r))
	return r, nil
}

func hookParams(args map[string]any, url, secret string, cursor *string, ttlMs any) map[string]any {
	p := map[string]any{"name": "sentinel.event", "arguments": args,
		"delivery": map[string]any{"mode": "webhook", "url": url, "secret": secret}, "cursor": cursor}
	if ttlMs != "absent" {
		p["ttlMs"] = ttlMs
	}
	return p
}

func consumerExists(t *testing.T, a *app.App, subID string) bool {
	s, err := a.Bus.Stream(context.Background(), "SENTINEL_MCP_EVENTS")
	require.NoError(t, err)
	_, err = s.Consumer(context.Background(), "mcp-webhook-"+subID)
	return err == nil
}

func feedMsgs(t *testing.T, a *app.App) uint64 {
	s, err := a.Bus.Stream(context.Background(), "SENTINEL_MCP_EVENTS")
	require.NoError(t, err)
	info, err := s.Info(context.Background())
	require.NoError(t, err)
	return info.State.Msgs
}

// After events/unsubscribe nothing more is delivered: an event that was
// being retried when the client unsubscribed never arrives, though the
// receiver recovers and another subscription's events still do.
func TestMCPEventsWebhookNoDeliveryAfterUnsubscribe(t *testing.T) {
	t.Parallel()
	a := webhookNode(t, func(c *app.Config) { c.MCPEvents.RetryAttempts = 20 })
	c := newSEPClient(t, a.URL(), a.Token)
	rx := newReceiver(t, true)
	args := fakeArgs("fake:unsub/1")
	sub, e := c.subscribe("sentinel.event", args, rx.srv.URL+"/a", rx.secret, 600000)
	require.Nil(t, e)
	sen := subscriptionSentinel(t, a.URL(), a.Token, "webhook", "fake:unsub/1")
	rx.set(func(r *receiver) { r.down = true })
	pushFake(t, a.URL(), sen.ID, fakeEvent("u1", "fake:unsub/1", "fake.one"))
	bustest.Eventually(t, 30*time.Second, func() bool { return rx.attemptsOf("u1") >= 1 }, "the event is attempted")

	m := c.call("events/unsubscribe", map[string]any{"name": "sentinel.event", "arguments": args, "delivery": map[string]any{"url": rx.srv.URL + "/a"}})
	require.Nil(t, m.Error)
	require.False(t, consumerExists(t, a, sub.ID), "the subscription's consumer is gone with it")
	rx.set(func(r *receiver) { r.down = false })

	// A marker: another subscription's event comes through the same node.
	other := fakeArgs("fake:unsub/2")
	_, e = c.subscribe("sentinel.event", other, rx.srv.URL+"/a", rx.secret, 600000)
	require.Nil(t, e)
	osen := subscriptionSentinel(t, a.URL(), a.Token, "webhook", "fake:unsub/2")
	pushFake(t, a.URL(), osen.ID, fakeEvent("u2", "fake:unsub/2", "fake.one"))
	bustest.Eventually(t, 30*time.Second, func() bool { return rx.attemptsOf("u2") == 1 }, "the other subscription delivers")
	require.NotContains(t, rx.accepted(), "event:u1", "nothing of the ended subscription was delivered")
	require.Empty(t, rx.controlsOf("terminated"), "an unsubscribe is the client's own: no terminated envelope")
}

// At its TTL the subscription ends with a signed terminated envelope
// (NotFound, kind subscription) and nothing after it.
func TestMCPEventsWebhookTerminatedAtItsTTL(t *testing.T) {
	t.Parallel()
	a := webhookNode(t, nil)
	c := newSEPClient(t, a.URL(), a.Token)
	rx := newReceiver(t, true)
	sub, e := c.subscribe("sentinel.event", fakeArgs("fake:term-ttl/1"), rx.srv.URL, rx.secret, 1000)
	require.Nil(t, e)
	term, errObj := rx.terminated(t, "the terminated envelope arrives")
	require.EqualValues(t, -32023, errObj["code"])
	require.Equal(t, "NotFound", errObj["message"])
	require.Equal(t, "subscription", errObj["data"].(map[string]any)["kind"])
	require.NotContains(t, term, "eventId")
	_, _, _, bad := rx.snapshot()
	require.Zero(t, bad)
	require.False(t, consumerExists(t, a, sub.ID))
	require.Empty(t, subscriptionSentinel(t, a.URL(), a.Token, "webhook", "fake:term-ttl/1").ID)
}

// When the server removes the sentinel behind a subscription (sentinel
// rm), the subscription ends with a terminated envelope.
func TestMCPEventsWebhookTerminatedWhenTheServerRemovesIt(t *testing.T) {
	t.Parallel()
	a := webhookNode(t, nil)
	c := newSEPClient(t, a.URL(), a.Token)
	rx := newReceiver(t, true)
	_, e := c.subscribe("sentinel.event", fakeArgs("fake:term-rm/1"), rx.srv.URL, rx.secret, 600000)
	require.Nil(t, e)
	sen := subscriptionSentinel(t, a.URL(), a.Token, "webhook", "fake:term-rm/1")
	req, err := http.NewRequest(http.MethodDelete, a.URL()+"/sentinels/"+sen.ID, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+a.Token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Less(t, resp.StatusCode, 300)
	_, errObj := rx.terminated(t, "the terminated envelope arrives")
	require.EqualValues(t, -32023, errObj["code"])
	// The subscription no longer exists: a refresh is a fresh subscribe
	// (verified already, so no challenge), and the unsubscribe of the old
	// one finds nothing.
	m := c.call("events/unsubscribe", map[string]any{"name": "sentinel.event", "arguments": fakeArgs("fake:term-rm/1"), "delivery": map[string]any{"url": rx.srv.URL}})
	require.NotNil(t, m.Error)
	require.Equal(t, -32023, m.Error.Code)
}

// Events the feed dropped before they reached the endpoint (retention,
// while the receiver was failing) are announced by a signed gap envelope
// carrying a fresh cursor, before the next event.
func TestMCPEventsWebhookGapEnvelope(t *testing.T) {
	t.Parallel()
	a := webhookNode(t, func(c *app.Config) {
		c.MCPEvents.Retention = time.Second
		c.MCPEvents.RetryAttempts = 20
		c.MCPEvents.RetryBackoff = 100 * time.Millisecond
	})
	c := newSEPClient(t, a.URL(), a.Token)
	rx := newReceiver(t, true)
	args := fakeArgs("fake:gap/1")
	_, e := c.subscribe("sentinel.event", args, rx.srv.URL, rx.secret, 600000)
	require.Nil(t, e)
	sen := subscriptionSentinel(t, a.URL(), a.Token, "webhook", "fake:gap/1")
	rx.set(func(r *receiver) { r.down = true })
	pushFake(t, a.URL(), sen.ID, fakeEvent("g1", "fake:gap/1", "fake.one"))
	bustest.Eventually(t, 30*time.Second, func() bool { return rx.attemptsOf("g1") >= 1 && feedMsgs(t, a) == 0 },
		"the event was attempted, then retention dropped it")
	rx.set(func(r *receiver) { r.down = false })
	pushFake(t, a.URL(), sen.ID, fakeEvent("g2", "fake:gap/1", "fake.two"))
	bustest.Eventually(t, 30*time.Second, func() bool { return rx.attemptsOf("g2") == 1 }, "the next event is delivered")
	order := rx.accepted()
	require.Equal(t, []string{"verification", "gap", "event:g2"}, order, "the gap comes before the event after it; the lost one never")
	gap := rx.controlsOf("gap")[0]
	cur, ok := gap["cursor"].(string)
	require.True(t, ok)
	// The gap's cursor is a valid cursor of this subscription.
	r := c.poll("sentinel.event", args, &cur, nil)
	require.NotNil(t, r.Cursor)
}

// A receiver failing persistently gets its delivery suspended
// (deliveryStatus.active false, no worker, no attempt spent); the
// refresh that reports it reactivates delivery and the pending event
// arrives.
func TestMCPEventsWebhookSuspendedThenReactivatedByARefresh(t *testing.T) {
	t.Parallel()
	a := webhookNode(t, func(c *app.Config) {
		c.MCPEvents.RetryAttempts = 20
		c.MCPEvents.SuspendMinAttempts = 3
	})
	c := newSEPClient(t, a.URL(), a.Token)
	rx := newReceiver(t, true)
	args := fakeArgs("fake:suspend/1")
	sub, e := c.subscribe("sentinel.event", args, rx.srv.URL, rx.secret, 600000)
	require.Nil(t, e)
	sen := subscriptionSentinel(t, a.URL(), a.Token, "webhook", "fake:suspend/1")
	bustest.Eventually(t, 30*time.Second, func() bool { return a.MCPEvents.Webhooks().Running() == 1 }, "one worker")
	rx.set(func(r *receiver) { r.down = true })
	pushFake(t, a.URL(), sen.ID, fakeEvent("s1", "fake:suspend/1", "fake.one"))
	bustest.Eventually(t, 30*time.Second, func() bool {
		rec, _, err := a.MCPEvents.Store().Get(context.Background(), sub.ID)
		require.NoError(t, err)
		return !rec.Status.Active && rec.SuspendedMs != 0
	}, "delivery is suspended")
	bustest.Eventually(t, 30*time.Second, func() bool { return a.MCPEvents.Webhooks().Running() == 0 }, "the suspended subscription has no worker")
	require.Equal(t, 3, rx.attemptsOf("s1"), "suspended after the sustained failures, spending no more attempts")

	rx.set(func(r *receiver) { r.down = false })
	again, e := c.subscribe("sentinel.event", args, rx.srv.URL, rx.secret, 600000)
	require.Nil(t, e)
	require.NotNil(t, again.DeliveryStatus)
	require.False(t, again.DeliveryStatus.Active, "the refresh reports the suspension it lifts")
	require.Equal(t, "http_5xx", *again.DeliveryStatus.LastError)
	require.NotNil(t, again.DeliveryStatus.FailedSince)
	bustest.Eventually(t, 30*time.Second, func() bool { return rx.attemptsOf("s1") == 4 && len(rx.accepted()) == 2 }, "the pending event is retried and accepted")
	// The receiver counts the POST before it answers, and the node records
	// the delivery once the answer is in: wait for that record, or the
	// refresh below can read the status from before it.
	bustest.Eventually(t, 30*time.Second, func() bool {
		rec, _, err := a.MCPEvents.Store().Get(context.Background(), sub.ID)
		require.NoError(t, err)
		return rec.Status.LastDeliveryAt != nil && rec.Status.LastError == nil
	}, "the node records the delivery")
	again, e = c.subscribe("sentinel.event", args, rx.srv.URL, rx.secret, 600000)
	require.Nil(t, e)
	require.True(t, again.DeliveryStatus.Active)
	require.Nil(t, again.DeliveryStatus.LastError)
}

// 410 and 413 are final: the event is not retried (a 410 is not even a
// failure), and delivery goes on with the next event.
func TestEventsWebhook410And413AreFinal(t *testing.T) {
	t.Parallel()
	a := webhookNode(t, func(c *app.Config) { c.MCPEvents.RetryAttempts = 10 })
	c := newSEPClient(t, a.URL(), a.Token)
	rx := newReceiver(t, true)
	args := fakeArgs("fake:final/1")
	_, e := c.subscribe("sentinel.event", args, rx.srv.URL, rx.secret, 600000)
	require.Nil(t, e)
	sen := subscriptionSentinel(t, a.URL(), a.Token, "webhook", "fake:final/1")
	rx.set(func(r *receiver) { r.answer["f1"] = http.StatusGone })
	pushFake(t, a.URL(), sen.ID, fakeEvent("f1", "fake:final/1", "fake.one"))
	bustest.Eventually(t, 30*time.Second, func() bool { return rx.attemptsOf("f1") == 1 }, "the event is POSTed")
	rx.set(func(r *receiver) { r.answer["f2"] = http.StatusRequestEntityTooLarge })
	pushFake(t, a.URL(), sen.ID, fakeEvent("f2", "fake:final/1", "fake.two"))
	pushFake(t, a.URL(), sen.ID, fakeEvent("f3", "fake:final/1", "fake.three"))
	// One event in flight at a time: f3 comes only once f1 and f2 are
	// settled for good.
	bustest.Eventually(t, 30*time.Second, func() bool { return rx.attemptsOf("f3") == 1 }, "the next event is delivered")
	require.Equal(t, 1, rx.attemptsOf("f1"), "410 is final")
	require.Equal(t, 1, rx.attemptsOf("f2"), "413 is final")
	again, e := c.subscribe("sentinel.event", args, rx.srv.URL, rx.secret, 600000)
	require.Nil(t, e)
	require.True(t, again.DeliveryStatus.Active)
}

// ttlMs null asks for no expiry: granted as refreshBefore null with
// mcp_events.no_expiry (the subscription outlives any sweep), else
// answered with the cap (ttl_max).
func TestMCPEventsWebhookNoExpiry(t *testing.T) {
	t.Parallel()
	a := webhookNode(t, func(c *app.Config) { c.MCPEvents.TTLMax = time.Hour })
	c := newSEPClient(t, a.URL(), a.Token)
	rx := newReceiver(t, true)
	sub, e := c.subscribeWith(hookParams(fakeArgs("fake:forever/1"), rx.srv.URL, rx.secret, nil, nil))
	require.Nil(t, e)
	require.NotNil(t, sub.RefreshBefore, "no_expiry is off: a finite grant")
	rb, err := time.Parse(time.RFC3339Nano, *sub.RefreshBefore)
	require.NoError(t, err)
	require.WithinDuration(t, time.Now().Add(time.Hour), rb, time.Minute, "null gets the cap")
	_, e = c.subscribeWith(hookParams(fakeArgs("fake:forever/1"), rx.srv.URL, rx.secret, nil, "soon"))
	require.NotNil(t, e)
	require.Equal(t, -32602, e.Code, "a ttlMs that is not a number")

	b := webhookNode(t, func(c *app.Config) { c.MCPEvents.NoExpiry = true })
	cb := newSEPClient(t, b.URL(), b.Token)
	sub, e = cb.subscribeWith(hookParams(fakeArgs("fake:forever/2"), rx.srv.URL, rx.secret, nil, nil))
	require.Nil(t, e)
	require.Nil(t, sub.RefreshBefore, "no expiry granted")
	rec, _, err := b.MCPEvents.Store().Get(context.Background(), sub.ID)
	require.NoError(t, err)
	require.Zero(t, rec.ExpiresMs)
	// A finite suggestion on refresh converts it back.
	sub, e = cb.subscribeWith(hookParams(fakeArgs("fake:forever/2"), rx.srv.URL, rx.secret, nil, 600000))
	require.Nil(t, e)
	require.NotNil(t, sub.RefreshBefore)
}

// A no-expiry subscription whose delivery stays suspended is dropped
// after mcp_events.drop_suspended_after, with a terminated envelope
// (CallbackEndpointError, its lastError).
func TestMCPEventsWebhookNoExpiryDroppedAfterSustainedFailure(t *testing.T) {
	t.Parallel()
	a := webhookNode(t, func(c *app.Config) {
		c.MCPEvents.NoExpiry = true
		c.MCPEvents.RetryAttempts = 20
		c.MCPEvents.SuspendMinAttempts = 2
		c.MCPEvents.DropSuspendedAfter = time.Second
	})
	c := newSEPClient(t, a.URL(), a.Token)
	rx := newReceiver(t, true)
	sub, e := c.subscribeWith(hookParams(fakeArgs("fake:dropped/1"), rx.srv.URL, rx.secret, nil, nil))
	require.Nil(t, e)
	require.Nil(t, sub.RefreshBefore)
	sen := subscriptionSentinel(t, a.URL(), a.Token, "webhook", "fake:dropped/1")
	rx.set(func(r *receiver) { r.down = true }) // events fail, control envelopes are accepted
	pushFake(t, a.URL(), sen.ID, fakeEvent("d1", "fake:dropped/1", "fake.one"))
	_, errObj := rx.terminated(t, "the subscription is dropped")
	require.EqualValues(t, -32027, errObj["code"])
	require.Equal(t, "http_5xx", errObj["data"].(map[string]any)["reason"])
	require.Empty(t, subscriptionSentinel(t, a.URL(), a.Token, "webhook", "fake:dropped/1").ID)
}
