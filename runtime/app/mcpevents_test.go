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

// mcpEventsNode starts a node with the fake provider and tune applied.
func mcpEventsNode(t *testing.T, home string, tune func(*app.Config), opts ...app.Option) *app.App {
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
	a, err := app.New(cfg, testLogger(t, "events"), opts...)
	require.NoError(t, err)
	require.NoError(t, a.Start(context.Background()))
	t.Cleanup(func() { _ = a.Stop(context.Background()) })
	return a
}

func strp(s string) *string { return &s }

// fakeArgs are sentinel.event arguments watched by the fake provider.
func fakeArgs(subject string) map[string]any {
	return map[string]any{"subject": subject, "provider": "fake"}
}

// server/discover of revision 2026-07-28 advertises the extension; an
// earlier revision has no events/* (Method not found), and events/list
// offers the two event types with their schemas.
func TestMCPEventsDiscoverAndList(t *testing.T) {
	t.Parallel()
	a := mcpEventsNode(t, t.TempDir(), nil)
	c := newSEPClient(t, a.URL(), a.Token)

	m := c.call("server/discover", nil)
	require.Nil(t, m.Error)
	var disc struct {
		Capabilities struct {
			Extensions map[string]json.RawMessage `json:"extensions"`
		} `json:"capabilities"`
	}
	require.NoError(t, json.Unmarshal(m.Result, &disc))
	require.Contains(t, disc.Capabilities.Extensions, "io.modelcontextprotocol/events")

	// An earlier revision: initialize, then events/list is Method not found.
	init := c.callRev("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "sep-client", "version": "1"}}, "")
	require.Nil(t, init.Error)
	legacy := c.callRev("events/list", nil, "")
	require.NotNil(t, legacy.Error)
	require.Equal(t, -32601, legacy.Error.Code)

	m = c.call("events/list", nil)
	require.Nil(t, m.Error)
	var list struct {
		ResultType string `json:"resultType"`
		Events     []struct {
			Name          string         `json:"name"`
			Delivery      []string       `json:"delivery"`
			InputSchema   map[string]any `json:"inputSchema"`
			PayloadSchema map[string]any `json:"payloadSchema"`
		} `json:"events"`
	}
	require.NoError(t, json.Unmarshal(m.Result, &list))
	require.Equal(t, "complete", list.ResultType)
	names := map[string]bool{}
	for _, e := range list.Events {
		names[e.Name] = true
		require.Contains(t, e.Delivery, "poll")
		require.Contains(t, e.Delivery, "push")
		require.Equal(t, "object", e.InputSchema["type"])
		require.Equal(t, "object", e.PayloadSchema["type"])
	}
	require.True(t, names["github.pull_request.activity"] && names["sentinel.event"], "%v", names)
}

// Poll: a null cursor bootstraps without events; events pushed to the
// subscription's sentinel come after the cursor, at most maxEvents at a
// time with hasMore; the subscription is a sentinel with an mcp-events
// target and no session, and nothing lands in a session inbox. Errors
// are named: unknown event (NotFound), bad arguments and bad cursors
// (InvalidParams).
func TestMCPEventsPoll(t *testing.T) {
	t.Parallel()
	a := mcpEventsNode(t, t.TempDir(), nil)
	c := newSEPClient(t, a.URL(), a.Token)
	args := fakeArgs("fake:widgets/1")

	boot := c.poll("sentinel.event", args, nil, nil)
	require.Empty(t, boot.Events)
	require.False(t, boot.Truncated)
	require.Equal(t, a.Cfg.Poll.ActiveInterval.Milliseconds(), boot.NextPollMs)

	sen := subscriptionSentinel(t, a.URL(), a.Token, "poll", "fake:widgets/1")
	require.NotEmpty(t, sen.ID, "the subscription is a sentinel of sentinel list")
	require.Empty(t, sen.Target.SessionID)

	pushFake(t, a.URL(), sen.ID, fakeEvent("e1", "fake:widgets/1", "fake.one"), fakeEvent("e2", "fake:widgets/1", "fake.two"))
	var got []occurrence
	cursor := boot.Cursor
	bustest.Eventually(t, 30*time.Second, func() bool {
		r := c.poll("sentinel.event", args, cursor, map[string]any{"maxEvents": 1})
		got = append(got, r.Events...)
		cursor = r.Cursor
		require.LessOrEqual(t, len(r.Events), 1)
		return len(got) >= 2
	}, "both events come after the bootstrap cursor")
	// With both in the feed, a batch capped at one from the bootstrap
	// cursor says there is more (asked once both are known delivered: the
	// second may reach the feed after the first poll).
	capped := c.poll("sentinel.event", args, boot.Cursor, map[string]any{"maxEvents": 1})
	require.Len(t, capped.Events, 1)
	require.True(t, capped.HasMore, "a capped batch says hasMore")
	require.Equal(t, "e1", got[0].EventID)
	require.Equal(t, "e2", got[1].EventID)
	require.Equal(t, "sentinel.event", got[0].Name)
	var env map[string]any
	require.NoError(t, json.Unmarshal(got[0].Data, &env))
	require.Equal(t, "1.0", env["specversion"])
	require.Equal(t, "fake:widgets/1", env["subject"])

	again := c.poll("sentinel.event", args, cursor, nil)
	require.Empty(t, again.Events, "nothing is delivered twice")
	require.False(t, again.HasMore)

	// The events never reached a session inbox.
	resp, raw := (&node{t: t, app: a}).req("GET", "/sessions", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(raw))
	require.NotContains(t, string(raw), "e1")

	// Errors by name.
	e := c.pollError("no.such.event", args, nil)
	require.Equal(t, -32023, e.Code)
	require.Equal(t, "NotFound", e.Message)
	require.Equal(t, "event", e.Data["kind"])
	e = c.pollError("sentinel.event", map[string]any{"subject": 7}, nil)
	require.Equal(t, -32602, e.Code)
	e = c.pollError("sentinel.event", map[string]any{"subject": "fake:x", "provider": "fake", "color": "red"}, nil)
	require.Equal(t, -32602, e.Code)
	tampered := []byte(*cursor)
	tampered[3] ^= 0x01
	e = c.pollError("sentinel.event", args, strp(string(tampered)))
	require.Equal(t, -32602, e.Code)
	require.Equal(t, "InvalidParams", e.Message)
	e = c.pollError("sentinel.event", fakeArgs("fake:widgets/2"), cursor)
	require.Equal(t, -32602, e.Code, "a cursor of another subscription is foreign")
}

// A poll cursor survives a restart of the node: the events delivered
// while the client was away come after it.
func TestMCPEventsPollResumesAfterANodeRestart(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	a := mcpEventsNode(t, home, nil)
	c := newSEPClient(t, a.URL(), a.Token)
	args := fakeArgs("fake:restart/1")
	boot := c.poll("sentinel.event", args, nil, nil)
	sen := subscriptionSentinel(t, a.URL(), a.Token, "poll", "fake:restart/1")
	require.NotEmpty(t, sen.ID)
	pushFake(t, a.URL(), sen.ID, fakeEvent("r1", "fake:restart/1", "fake.one"))
	bustest.Eventually(t, 30*time.Second, func() bool {
		raw, err := a.Bus.Stream(context.Background(), "SENTINEL_MCP_EVENTS")
		require.NoError(t, err)
		info, err := raw.Info(context.Background())
		require.NoError(t, err)
		return info.State.Msgs >= 1
	}, "the event reaches the feed")
	require.NoError(t, a.Stop(context.Background()))

	b := mcpEventsNode(t, home, nil)
	c2 := newSEPClient(t, b.URL(), b.Token)
	r := c2.poll("sentinel.event", args, boot.Cursor, nil)
	require.Len(t, r.Events, 1)
	require.Equal(t, "r1", r.Events[0].EventID)
	require.False(t, r.Truncated)
}

// When retention dropped events after a cursor, the poll says truncated.
func TestMCPEventsPollTruncatedAfterRetention(t *testing.T) {
	t.Parallel()
	a := mcpEventsNode(t, t.TempDir(), func(c *app.Config) { c.MCPEvents.Retention = time.Second })
	c := newSEPClient(t, a.URL(), a.Token)
	args := fakeArgs("fake:retained/1")
	boot := c.poll("sentinel.event", args, nil, nil)
	sen := subscriptionSentinel(t, a.URL(), a.Token, "poll", "fake:retained/1")
	pushFake(t, a.URL(), sen.ID, fakeEvent("t1", "fake:retained/1", "fake.one"))
	bustest.Eventually(t, 30*time.Second, func() bool {
		s, err := a.Bus.Stream(context.Background(), "SENTINEL_MCP_EVENTS")
		require.NoError(t, err)
		info, err := s.Info(context.Background())
		require.NoError(t, err)
		return info.State.LastSeq >= 1 && info.State.Msgs == 0
	}, "the event was stored, then aged out")
	r := c.poll("sentinel.event", args, boot.Cursor, nil)
	require.Empty(t, r.Events)
	require.True(t, r.Truncated)
	require.False(t, c.poll("sentinel.event", args, r.Cursor, nil).Truncated, "the fresh cursor is whole")
}

// maxAgeMs skips older events and says so.
func TestMCPEventsPollMaxAge(t *testing.T) {
	t.Parallel()
	a := mcpEventsNode(t, t.TempDir(), nil)
	c := newSEPClient(t, a.URL(), a.Token)
	args := fakeArgs("fake:aged/1")
	boot := c.poll("sentinel.event", args, nil, nil)
	sen := subscriptionSentinel(t, a.URL(), a.Token, "poll", "fake:aged/1")
	pushFake(t, a.URL(), sen.ID, fakeEvent("m1", "fake:aged/1", "fake.one"))
	bustest.Eventually(t, 30*time.Second, func() bool {
		r := c.poll("sentinel.event", args, boot.Cursor, map[string]any{"maxAgeMs": 3600000})
		return len(r.Events) == 1
	}, "a generous maxAgeMs keeps the event")
	r := c.poll("sentinel.event", args, boot.Cursor, map[string]any{"maxAgeMs": 0})
	require.Empty(t, r.Events)
	require.True(t, r.Truncated)
}

// A poll subscription nobody polls goes away after poll_idle_expiry.
func TestMCPEventsPollSubscriptionExpiresWhenIdle(t *testing.T) {
	t.Parallel()
	a := mcpEventsNode(t, t.TempDir(), func(c *app.Config) { c.MCPEvents.PollIdleExpiry = time.Second })
	c := newSEPClient(t, a.URL(), a.Token)
	c.poll("sentinel.event", fakeArgs("fake:idle/1"), nil, nil)
	require.NotEmpty(t, subscriptionSentinel(t, a.URL(), a.Token, "poll", "fake:idle/1").ID)
	bustest.Eventually(t, 30*time.Second, func() bool {
		return subscriptionSentinel(t, a.URL(), a.Token, "poll", "fake:idle/1").ID == ""
	}, "the idle subscription is removed")
}

// Push: the stream confirms with active, delivers events live with their
// cursor, heartbeats with the position, and ends the subscription when it
// closes; a new stream from a cursor replays what came after it.
func TestMCPEventsPushStream(t *testing.T) {
	t.Parallel()
	a := mcpEventsNode(t, t.TempDir(), func(c *app.Config) {
		c.MCPEvents.Heartbeat = 200 * time.Millisecond
		c.MCPEvents.PushLinger = time.Hour
	})
	c := newSEPClient(t, a.URL(), a.Token)
	args := map[string]any{"subject": "fake:pushed/1", "types": []string{"fake.*"}, "provider": "fake"}

	s := c.stream("sentinel.event", args, nil)
	active := s.next(t, "notifications/events/active")
	var act struct {
		Cursor    string `json:"cursor"`
		Truncated bool   `json:"truncated"`
	}
	require.NoError(t, json.Unmarshal(active.Params, &act))
	require.NotEmpty(t, act.Cursor)
	require.False(t, act.Truncated)
	sen := subscriptionSentinel(t, a.URL(), a.Token, "push", "fake:pushed/1")
	require.NotEmpty(t, sen.ID)
	require.Empty(t, sen.Target.SessionID)

	pushFake(t, a.URL(), sen.ID, fakeEvent("p1", "fake:pushed/1", "fake.one"), fakeEvent("skip", "fake:pushed/1", "other.kind"))
	ev := s.next(t, "notifications/events/event")
	var occ occurrence
	require.NoError(t, json.Unmarshal(ev.Params, &occ))
	require.Equal(t, "p1", occ.EventID)
	require.NotNil(t, occ.Cursor)
	hb := s.next(t, "notifications/events/heartbeat")
	var beat struct {
		Cursor string `json:"cursor"`
	}
	require.NoError(t, json.Unmarshal(hb.Params, &beat))
	require.NotEmpty(t, beat.Cursor)
	s.cancel()

	// Missed while no stream was open (the subscription lingers).
	pushFake(t, a.URL(), sen.ID, fakeEvent("p2", "fake:pushed/1", "fake.two"))
	bustest.Eventually(t, 30*time.Second, func() bool {
		st, err := a.Bus.Stream(context.Background(), "SENTINEL_MCP_EVENTS")
		require.NoError(t, err)
		info, err := st.Info(context.Background())
		require.NoError(t, err)
		return info.State.Msgs >= 2
	}, "the second event reaches the feed")
	s2 := c.stream("sentinel.event", args, occ.Cursor)
	active = s2.next(t, "notifications/events/active")
	require.NoError(t, json.Unmarshal(active.Params, &act))
	require.False(t, act.Truncated)
	ev = s2.next(t, "notifications/events/event")
	require.NoError(t, json.Unmarshal(ev.Params, &occ))
	require.Equal(t, "p2", occ.EventID, "the stream replays what came after its cursor, once")
}

// With no linger a push subscription ends with its stream.
func TestMCPEventsPushSubscriptionEndsWithItsStream(t *testing.T) {
	t.Parallel()
	a := mcpEventsNode(t, t.TempDir(), nil)
	c := newSEPClient(t, a.URL(), a.Token)
	s := c.stream("sentinel.event", fakeArgs("fake:closing/1"), nil)
	s.next(t, "notifications/events/active")
	require.NotEmpty(t, subscriptionSentinel(t, a.URL(), a.Token, "push", "fake:closing/1").ID)
	s.cancel()
	bustest.Eventually(t, 30*time.Second, func() bool {
		return subscriptionSentinel(t, a.URL(), a.Token, "push", "fake:closing/1").ID == ""
	}, "closing the stream ends the subscription")
}
