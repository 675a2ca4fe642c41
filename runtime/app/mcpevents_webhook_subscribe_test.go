package app_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/bus/bustest"
	"github.com/agentproto/sentinel/runtime/app"
)

// Verification challenges are rate-limited per destination host: past
// the limit a subscribe is ResourceExhausted and no challenge is sent.
func TestMCPEventsWebhookChallengesRateLimitedPerHost(t *testing.T) {
	t.Parallel()
	a := webhookNode(t, func(c *app.Config) { c.MCPEvents.VerifyPerHostPerMinute = 2 })
	c := newSEPClient(t, a.URL(), a.Token)
	rx := newReceiver(t, false) // never echoes: every subscribe challenges again
	for i := 0; i < 2; i++ {
		_, e := c.subscribe("sentinel.event", fakeArgs("fake:flood/1"), rx.srv.URL+"/victim", rx.secret, nil)
		require.Equal(t, -32027, e.Code)
	}
	_, e := c.subscribe("sentinel.event", fakeArgs("fake:flood/1"), rx.srv.URL+"/other-path", rx.secret, nil)
	require.NotNil(t, e)
	require.Equal(t, -32025, e.Code)
	require.Equal(t, "verifications", e.Data["limit"])
	_, controls, _, _ := rx.snapshot()
	require.Len(t, controls, 2, "no challenge past the limit")
}

// events/subscribe with a cursor replays what was missed after it: a
// fresh subscription of the same key starts after the cursor (what its
// earlier incarnation stored), saying truncated since events may have
// been missed while none existed.
func TestMCPEventsWebhookSubscribeWithACursorReplays(t *testing.T) {
	t.Parallel()
	a := webhookNode(t, func(c *app.Config) { c.MCPEvents.RetryAttempts = 20 })
	c := newSEPClient(t, a.URL(), a.Token)
	rx := newReceiver(t, true)
	args := fakeArgs("fake:replay/1")
	_, e := c.subscribe("sentinel.event", args, rx.srv.URL, rx.secret, 600000)
	require.Nil(t, e)
	sen := subscriptionSentinel(t, a.URL(), a.Token, "webhook", "fake:replay/1")
	pushFake(t, a.URL(), sen.ID, fakeEvent("x1", "fake:replay/1", "fake.one"))
	bustest.Eventually(t, 30*time.Second, func() bool { return rx.attemptsOf("x1") == 1 }, "the first event")
	evs, _, _, _ := rx.snapshot()
	cursor := evs[0]["cursor"].(string)
	rx.set(func(r *receiver) { r.down = true })
	pushFake(t, a.URL(), sen.ID, fakeEvent("x2", "fake:replay/1", "fake.two"))
	bustest.Eventually(t, 30*time.Second, func() bool { return rx.attemptsOf("x2") >= 1 }, "the second is attempted")
	m := c.call("events/unsubscribe", map[string]any{"name": "sentinel.event", "arguments": args, "delivery": map[string]any{"url": rx.srv.URL}})
	require.Nil(t, m.Error)
	rx.set(func(r *receiver) { r.down = false })

	sub, e := c.subscribeWith(hookParams(args, rx.srv.URL, rx.secret, &cursor, 600000))
	require.Nil(t, e)
	require.True(t, sub.Truncated, "events may have been missed while no subscription existed")
	bustest.Eventually(t, 30*time.Second, func() bool {
		for _, o := range rx.accepted() {
			if o == "event:x2" {
				return true
			}
		}
		return false
	}, "the event after the cursor is replayed")
	require.Equal(t, 1, rx.attemptsOf("x1"), "nothing at or before the cursor")

	// On a live subscription the cursor is a no-op.
	again, e := c.subscribeWith(hookParams(args, rx.srv.URL, rx.secret, &cursor, 600000))
	require.Nil(t, e)
	require.False(t, again.Truncated)
}

// Many webhook subscriptions: one worker each on the node, every event
// delivered once to its subscription.
func TestMCPEventsWebhookManySubscriptions(t *testing.T) {
	t.Parallel()
	const n = 30
	a := webhookNode(t, nil)
	c := newSEPClient(t, a.URL(), a.Token)
	rx := newReceiver(t, true)
	ids := map[string]string{}
	for i := 0; i < n; i++ {
		subject := "fake:many/" + string(rune('a'+i%26)) + strings.Repeat("x", i/26)
		sub, e := c.subscribe("sentinel.event", fakeArgs(subject), rx.srv.URL, rx.secret, 600000)
		require.Nil(t, e, "%+v", e)
		ids[subject] = sub.ID
	}
	_, controls, _, _ := rx.snapshot()
	require.Len(t, controls, 1, "verification is per (principal, url): one challenge")
	bustest.Eventually(t, 30*time.Second, func() bool { return a.MCPEvents.Webhooks().Running() == n }, "one worker per subscription")
	for subject := range ids {
		sen := subscriptionSentinel(t, a.URL(), a.Token, "webhook", subject)
		pushFake(t, a.URL(), sen.ID, fakeEvent("m-"+subject, subject, "fake.one"))
	}
	bustest.Eventually(t, 60*time.Second, func() bool { evs, _, _, _ := rx.snapshot(); return len(evs) >= n }, "every event is delivered")
	evs, _, attempts, bad := rx.snapshot()
	require.Len(t, evs, n)
	require.Zero(t, bad)
	for subject := range ids {
		require.Equal(t, 1, attempts["m-"+subject])
	}
	rx.mu.Lock()
	require.Len(t, rx.subIDs, n, "each delivery names its own subscription")
	rx.mu.Unlock()
	// Idle, each subscription costs the node one waiting pull request.
	st, err := a.Bus.Stream(context.Background(), "SENTINEL_MCP_EVENTS")
	require.NoError(t, err)
	for _, id := range ids {
		cons, err := st.Consumer(context.Background(), "mcp-webhook-"+id)
		require.NoError(t, err)
		info, err := cons.Info(context.Background())
		require.NoError(t, err)
		require.LessOrEqual(t, info.NumWaiting, 1, "one long-lived pull, not a fetch loop")
	}
}
