package app_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/providers/agentpush/agentpushtest"
)

// Over MCP an agent token has its HTTP scope: it watches, reads and
// writes only its sessions (the caller identity it names included), sees
// only its sentinels, and sets no provider up.
func TestAgentTokenIsScopedOverMCP(t *testing.T) {
	t.Parallel()
	n := startNode(t)
	agent := n.token("helper", "agent", "ag-")
	n.expect(http.StatusCreated, "POST", "/sentinels", watchBody("other-1", "1"))
	c := newSEPClient(t, n.app.URL(), agent)

	out := toolResult(t, c, "sentinel_watch", map[string]any{"subject": "github:acme/widgets#2", "sessionId": "other-1", "provider": "fake"})
	require.Equal(t, "forbidden_scope", out["error"], "%v", out)
	out = toolResult(t, c, "inbox_read", map[string]any{"sessionId": "other-1"})
	require.Equal(t, "forbidden_scope", out["error"], "%v", out)
	out = toolResult(t, c, "setup_sentinel_provider", map[string]any{"slug": "agentpush", "fields": map[string]string{"apiKey": "ap_x"}})
	require.Equal(t, "forbidden_scope", out["error"], "%v", out)
	out = toolResult(t, c, "sentinel_watch", map[string]any{"subject": "github:acme/widgets#3", "sessionId": "ag-1", "provider": "fake"})
	require.Equal(t, true, out["ok"], "%v", out)
	out = toolResult(t, c, "sentinel_list", map[string]any{})
	require.Len(t, out["sentinels"], 1, "only its own: %v", out)

	// The caller identity is a claim of the client: one outside the
	// token's sessions is refused.
	claimed := newSEPClient(t, n.app.URL(), agent)
	claimed.url += "?callerSessionId=other-1"
	out = toolResult(t, claimed, "sentinel_watch", map[string]any{"subject": "github:acme/widgets#4", "provider": "fake"})
	require.Equal(t, "forbidden_scope", out["error"], "%v", out)
	out = toolResult(t, claimed, "inbox_read", map[string]any{})
	require.Equal(t, "forbidden_scope", out["error"], "the caller's own inbox, outside the token's sessions: %v", out)
}

// The review's attack on item 3: setup_sentinel_provider pointed agentpush
// at the caller's own server, and the next watch of a private PR without a
// provider sent its subject there. An endpoint is an operator setting: MCP
// refuses it (endpoint_operator_only), whatever the token; the API takes it
// from an admin token, and a watch without a provider then never goes to
// the new endpoint until a setup confirms it (restating it). Named
// explicitly, it does.
func TestEndpointsAreOperatorSettings(t *testing.T) {
	t.Parallel()
	n := startNode(t)
	const key = "ap_key_of_the_operator_0123456789"
	attacker := agentpushtest.Start(t, agentpushtest.Config{APIKey: key})
	c := newSEPClient(t, n.app.URL(), n.app.Token) // even the admin token, over MCP

	out := toolResult(t, c, "setup_sentinel_provider", map[string]any{"slug": "agentpush", "fields": map[string]string{"apiKey": key, "baseUrl": attacker.URL}})
	require.Equal(t, "endpoint_operator_only", out["error"], "%v", out)
	require.Contains(t, out["message"], "sentinel setup agentpush")
	out = toolResult(t, c, "setup_sentinel_provider", map[string]any{"slug": "agentpush", "fields": map[string]string{"baseUrl": ""}})
	require.Equal(t, "endpoint_operator_only", out["error"], "clearing it is setting it: %v", out)

	// The operator sets it through the API.
	set := n.expect(http.StatusOK, "POST", "/adapters/agentpush/setup", map[string]any{"fields": map[string]string{"apiKey": key, "baseUrl": attacker.URL}})
	require.Equal(t, true, set["setup"].(map[string]any)["endpointUnconfirmed"])
	adapters := n.expect(http.StatusOK, "GET", "/adapters", nil)["adapters"].([]any)
	for _, a := range adapters {
		if a.(map[string]any)["slug"] == "agentpush" {
			require.Equal(t, false, a.(map[string]any)["info"].(map[string]any)["autoSelect"])
		}
	}
	// A watch without a provider does not go to the endpoint just set.
	v := n.expect(http.StatusCreated, "POST", "/sentinels", map[string]any{"subject": "jira:PRIV-42", "types": []string{"*"}, "sessionId": "s1"})
	require.NotEqual(t, "agentpush", v["sentinel"].(map[string]any)["provider"])
	require.Empty(t, attacker.RequestsTo("POST", "/subscriptions"), "no subject went to the new endpoint")
	// Named explicitly, it does.
	n.expect(http.StatusCreated, "POST", "/sentinels", map[string]any{"subject": "jira:PRIV-43", "types": []string{"*"}, "sessionId": "s1", "provider": "agentpush"})
	require.Len(t, attacker.RequestsTo("POST", "/subscriptions"), 1)
	// Restated, it is confirmed and auto-selected again.
	set = n.expect(http.StatusOK, "POST", "/adapters/agentpush/setup", map[string]any{"fields": map[string]string{"baseUrl": attacker.URL}})
	require.Nil(t, set["setup"].(map[string]any)["endpointUnconfirmed"])
	v = n.expect(http.StatusCreated, "POST", "/sentinels", map[string]any{"subject": "jira:PRIV-44", "types": []string{"*"}, "sessionId": "s1"})
	require.Equal(t, "agentpush", v["sentinel"].(map[string]any)["provider"])

	// The key alone stays settable over MCP (an agent may be handed one).
	out = toolResult(t, c, "setup_sentinel_provider", map[string]any{"slug": "agentpush", "fields": map[string]string{"delivery": "poll"}})
	require.Equal(t, true, out["ok"], "%v", out)
}

// The review's attack on MCP Events: one client's events/unsubscribe
// removed another's subscription, and cursors worked across clients. A
// subscription and its cursors belong to the principal that made them:
// another token's unsubscribe finds nothing (the subscription stays), and
// its poll with the first's cursor is refused. A read token makes none.
func TestEventSubscriptionsBelongToTheirPrincipal(t *testing.T) {
	t.Parallel()
	a := webhookNode(t, nil)
	n := &node{t: t, app: a}
	other := n.token("other-agent", "agent", "*")
	reader := n.token("watcher", "read", "")
	mine, theirs := newSEPClient(t, a.URL(), a.Token), newSEPClient(t, a.URL(), other)
	rx := newReceiver(t, true)
	args := fakeArgs("fake:owned/1")
	sub, e := mine.subscribe("sentinel.event", args, rx.srv.URL+"/a", rx.secret, 600000)
	require.Nil(t, e)

	m := theirs.call("events/unsubscribe", map[string]any{"name": "sentinel.event", "arguments": args, "delivery": map[string]any{"url": rx.srv.URL + "/a"}})
	require.NotNil(t, m.Error, "another principal's unsubscribe: %s", m.Result)
	require.Equal(t, -32023, m.Error.Code, "NotFound")
	require.True(t, consumerExists(t, a, sub.ID), "the subscription is still there")

	boot := mine.poll("sentinel.event", fakeArgs("fake:owned/2"), nil, nil)
	e2 := theirs.pollError("sentinel.event", fakeArgs("fake:owned/2"), boot.Cursor)
	require.Equal(t, -32602, e2.Code, "a cursor of another principal is foreign")

	r := newSEPClient(t, a.URL(), reader).pollError("sentinel.event", fakeArgs("fake:owned/3"), nil)
	require.Equal(t, -32024, r.Code, "Forbidden for a read token")

	m = mine.call("events/unsubscribe", map[string]any{"name": "sentinel.event", "arguments": args, "delivery": map[string]any{"url": rx.srv.URL + "/a"}})
	require.Nil(t, m.Error, "its own principal unsubscribes it")
}
