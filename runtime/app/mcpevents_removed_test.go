package app_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/runtime/app"
)

// When the server removes the sentinel behind a push subscription
// (sentinel rm), the stream says notifications/events/terminated and
// closes with its final frame.
func TestMCPEventsPushTerminatedWhenTheServerRemovesIt(t *testing.T) {
	t.Parallel()
	a := mcpEventsNode(t, t.TempDir(), func(c *app.Config) { c.MCPEvents.Heartbeat = 200 * time.Millisecond })
	c := newSEPClient(t, a.URL(), a.Token)
	s := c.stream("sentinel.event", fakeArgs("fake:push-rm/1"), nil)
	s.next(t, "notifications/events/active")
	sen := subscriptionSentinel(t, a.URL(), a.Token, "push", "fake:push-rm/1")
	require.NotEmpty(t, sen.ID)
	removeSentinel(t, a, sen.ID)

	term := s.next(t, "notifications/events/terminated")
	var p struct {
		Error struct {
			Code    int            `json:"code"`
			Message string         `json:"message"`
			Data    map[string]any `json:"data"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal(term.Params, &p))
	require.Equal(t, -32023, p.Error.Code)
	require.Equal(t, "NotFound", p.Error.Message)
	require.Equal(t, "subscription", p.Error.Data["kind"])
	select {
	case final, ok := <-s.msgs:
		require.True(t, ok, "the final frame")
		require.Empty(t, final.Method)
		require.JSONEq(t, `"complete"`, string(mustField(t, final.Result, "resultType")))
	case <-time.After(30 * time.Second):
		t.Fatal("no final frame")
	}
	_, open := <-s.msgs
	require.False(t, open, "the stream is closed")
}

func mustField(t *testing.T, raw json.RawMessage, key string) json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(raw, &m))
	return m[key]
}

// removeSentinel is the operator's sentinel rm, over REST.
func removeSentinel(t *testing.T, a *app.App, id string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodDelete, a.URL()+"/sentinels/"+id, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+a.Token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Less(t, resp.StatusCode, 300)
}

// A poll subscription whose sentinel the server removed is watched again
// from its next poll, which says truncated (nothing watched meanwhile).
func TestMCPEventsPollAfterTheServerRemovedItsSentinel(t *testing.T) {
	t.Parallel()
	a := mcpEventsNode(t, t.TempDir(), nil)
	c := newSEPClient(t, a.URL(), a.Token)
	args := fakeArgs("fake:poll-rm/1")
	boot := c.poll("sentinel.event", args, nil, nil)
	sen := subscriptionSentinel(t, a.URL(), a.Token, "poll", "fake:poll-rm/1")
	removeSentinel(t, a, sen.ID)
	r := c.poll("sentinel.event", args, boot.Cursor, nil)
	require.True(t, r.Truncated)
	again := subscriptionSentinel(t, a.URL(), a.Token, "poll", "fake:poll-rm/1")
	require.NotEmpty(t, again.ID)
	require.NotEqual(t, sen.ID, again.ID)
	require.False(t, c.poll("sentinel.event", args, r.Cursor, nil).Truncated, "the fresh cursor is whole")
}
