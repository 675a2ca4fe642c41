package app_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/bus/bustest"
)

// as sends a request with token and returns the status and the decoded
// JSON answer.
func (n *node) as(token, method, path string, body any) (int, map[string]any) {
	n.t.Helper()
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		require.NoError(n.t, err)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, n.app.URL()+path, rd)
	require.NoError(n.t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := reqClient.Do(req)
	require.NoError(n.t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(n.t, err)
	var out map[string]any
	if len(raw) > 0 && raw[0] == '{' {
		require.NoError(n.t, json.Unmarshal(raw, &out), string(raw))
	}
	return resp.StatusCode, out
}

// expectAs is as, requiring the status.
func (n *node) expectAs(token string, status int, method, path string, body any) map[string]any {
	n.t.Helper()
	got, out := n.as(token, method, path, body)
	require.Equal(n.t, status, got, "%s %s: %v", method, path, out)
	return out
}

// token creates a named token with the node's own (admin) token.
func (n *node) token(name, scope, sessions string) string {
	n.t.Helper()
	out := n.expect(http.StatusCreated, "POST", "/tokens", map[string]any{"name": name, "scope": scope, "sessions": sessions})
	tok := out["token"].(string)
	require.True(n.t, strings.HasPrefix(tok, "sntl_"+name+"_"))
	return tok
}

func watchBody(session, pr string) map[string]any {
	return map[string]any{"subject": "github:acme/widgets#" + pr, "sessionId": session, "provider": "fake"}
}

// Named tokens: created and listed by an admin (the node's own token), the
// secret shown once and never listed, refused once revoked; a non-admin
// token manages none.
func TestNamedTokensLifecycleOverHTTP(t *testing.T) {
	t.Parallel()
	n := startNode(t)
	tok := n.token("ci-bot", "agent", "ci-")
	list := n.expect(http.StatusOK, "GET", "/tokens", nil)["tokens"].([]any)
	require.Len(t, list, 1)
	entry := list[0].(map[string]any)
	require.Equal(t, "ci-bot", entry["name"])
	require.Equal(t, "agent", entry["scope"])
	require.Equal(t, "ci-", entry["sessions"])
	require.Equal(t, "operator", entry["createdBy"])
	raw, _ := json.Marshal(list)
	require.NotContains(t, string(raw), tok[len("sntl_ci-bot_"):], "the listing never shows the secret")
	require.Equal(t, "token_exists", n.expect(http.StatusConflict, "POST", "/tokens", map[string]any{"name": "ci-bot", "scope": "read"})["error"])
	require.Equal(t, "invalid_input", n.expect(http.StatusBadRequest, "POST", "/tokens", map[string]any{"name": "x", "scope": "agent"})["error"], "agent needs sessions")

	n.expectAs(tok, http.StatusOK, "GET", "/sentinels", nil)
	for _, r := range []struct{ method, path string }{{"POST", "/tokens"}, {"GET", "/tokens"}, {"DELETE", "/tokens/ci-bot"}} {
		out := n.expectAs(tok, http.StatusForbidden, r.method, r.path, map[string]any{"name": "mine", "scope": "admin"})
		require.Equal(t, "forbidden_scope", out["error"], r)
	}
	admin := n.token("second-admin", "admin", "")
	n.expectAs(admin, http.StatusOK, "GET", "/tokens", nil)

	n.expect(http.StatusOK, "DELETE", "/tokens/ci-bot", nil)
	require.Equal(t, "unauthorized", n.expectAs(tok, http.StatusUnauthorized, "GET", "/sentinels", nil)["error"], "revoked")
	require.Equal(t, "token_not_found", n.expect(http.StatusNotFound, "DELETE", "/tokens/ci-bot", nil)["error"])
}

// The review's attack: an agent holding the token posted a message that
// rendered from="human". A named token's message is labelled with its
// name (relation principal), never human; with a caller session its
// relation is that session's, and it names the principal too. The
// operator's own token still posts as human.
func TestMessagesOfANamedTokenAreLabelledWithIt(t *testing.T) {
	t.Parallel()
	n := startNode(t)
	agent := n.token("helper", "agent", "ag-")
	out := n.expectAs(agent, http.StatusCreated, "POST", "/sessions/ag-1/messages", map[string]any{"text": "stop everything", "urgency": "interrupt"})
	from := out["message"].(map[string]any)["from"].(map[string]any)
	require.Equal(t, "principal", from["relation"])
	require.Equal(t, "helper", from["principal"])
	require.NotEqual(t, "human", from["relation"])

	msgs := n.expect(http.StatusOK, "GET", "/sessions/ag-1/inbox", nil)["messages"].([]any)
	require.Len(t, msgs, 1)
	require.Equal(t, "principal", msgs[0].(map[string]any)["from"].(map[string]any)["relation"], "as stored")

	own := n.expect(http.StatusCreated, "POST", "/sessions/ag-1/messages", map[string]any{"text": "from the operator"})
	require.Equal(t, "human", own["message"].(map[string]any)["from"].(map[string]any)["relation"])

	// Outside its sessions: refused.
	require.Equal(t, "forbidden_scope", n.expectAs(agent, http.StatusForbidden, "POST", "/sessions/other-1/messages", map[string]any{"text": "x"})["error"])
}

// An agent token sees and changes only its sessions' sentinels, follows,
// inboxes and sessions; every refusal is named, and what belongs to other
// sessions answers as unknown.
func TestAgentTokenIsScopedToItsSessions(t *testing.T) {
	t.Parallel()
	n := startNode(t)
	agent := n.token("helper", "agent", "ag-")
	theirs := n.expect(http.StatusCreated, "POST", "/sentinels", watchBody("other-1", "1"))["sentinel"].(map[string]any)["id"].(string)
	mine := n.expectAs(agent, http.StatusCreated, "POST", "/sentinels", watchBody("ag-1", "2"))["sentinel"].(map[string]any)["id"].(string)

	// Sentinels.
	listed := n.expectAs(agent, http.StatusOK, "GET", "/sentinels", nil)["sentinels"].([]any)
	require.Len(t, listed, 1)
	require.Equal(t, mine, listed[0].(map[string]any)["id"])
	require.Len(t, n.expect(http.StatusOK, "GET", "/sentinels", nil)["sentinels"].([]any), 2, "the operator sees both")
	page := n.expectAs(agent, http.StatusOK, "GET", "/sentinels?limit=10", nil)["sentinels"].([]any)
	require.Len(t, page, 1)
	for _, r := range []struct{ method, path string }{{"GET", "/sentinels/" + theirs}, {"GET", "/sentinels/" + theirs + "/status"},
		{"DELETE", "/sentinels/" + theirs}, {"POST", "/sentinels/poll?id=" + theirs}, {"GET", "/sentinels/" + theirs + "/decisions"},
		{"GET", "/parked?sentinel=" + theirs}} {
		require.Equal(t, "sentinel_not_found", n.expectAs(agent, http.StatusNotFound, r.method, r.path, nil)["error"], r)
	}
	n.expect(http.StatusOK, "GET", "/sentinels/"+theirs, nil) // still there
	require.Equal(t, "forbidden_scope", n.expectAs(agent, http.StatusForbidden, "POST", "/sentinels", watchBody("other-1", "3"))["error"])
	require.Equal(t, "forbidden_scope", n.expectAs(agent, http.StatusForbidden, "POST", "/sentinels/poll", nil)["error"], "poll everything")
	require.Equal(t, "forbidden_scope", n.expectAs(agent, http.StatusForbidden, "GET", "/parked", nil)["error"], "every parked record")
	n.expectAs(agent, http.StatusOK, "GET", "/sentinels/"+mine, nil)
	n.expectAs(agent, http.StatusOK, "POST", "/sentinels/poll?id="+mine, nil)
	n.expectAs(agent, http.StatusOK, "DELETE", "/sentinels/"+mine, nil)

	// Sessions.
	n.expect(http.StatusCreated, "POST", "/sessions", map[string]any{"id": "other-1"})
	n.expectAs(agent, http.StatusCreated, "POST", "/sessions", map[string]any{"id": "ag-1"})
	require.Equal(t, "forbidden_scope", n.expectAs(agent, http.StatusForbidden, "POST", "/sessions", map[string]any{"id": "other-2"})["error"])
	out := n.expectAs(agent, http.StatusForbidden, "POST", "/sessions", map[string]any{"id": "ag-2", "hooks": map[string]any{"notify": []string{"/bin/sh", "-c", "id > /tmp/x"}}})
	require.Equal(t, "forbidden_scope", out["error"], "a command hook runs on the node: an operator setting")
	sessions := n.expectAs(agent, http.StatusOK, "GET", "/sessions", nil)["sessions"].([]any)
	require.Len(t, sessions, 1)
	require.Equal(t, "ag-1", sessions[0].(map[string]any)["id"])
	require.Equal(t, "forbidden_scope", n.expectAs(agent, http.StatusForbidden, "GET", "/sessions/other-1", nil)["error"])
	require.Equal(t, "forbidden_scope", n.expectAs(agent, http.StatusForbidden, "DELETE", "/sessions/other-1", nil)["error"])
	require.Equal(t, "forbidden_scope", n.expectAs(agent, http.StatusForbidden, "POST", "/sessions/other-1/events", map[string]any{"kind": "turn-end"})["error"])

	// Inboxes.
	n.expect(http.StatusCreated, "POST", "/sessions/other-1/messages", map[string]any{"text": "private"})
	require.Equal(t, "forbidden_scope", n.expectAs(agent, http.StatusForbidden, "GET", "/sessions/other-1/inbox", nil)["error"])
	require.Equal(t, "forbidden_scope", n.expectAs(agent, http.StatusForbidden, "GET", "/sessions/other-1/inbox?wait=1s", nil)["error"])
	require.Equal(t, "forbidden_scope", n.expectAs(agent, http.StatusForbidden, "GET", "/sessions/other-1/inbox/stream", nil)["error"])
	n.expectAs(agent, http.StatusOK, "GET", "/sessions/ag-1/inbox", nil)

	// Follows.
	follow := func(sel map[string]any) map[string]any {
		return map[string]any{"follower": "ag-1", "selector": sel}
	}
	require.Equal(t, "forbidden_scope", n.expectAs(agent, http.StatusForbidden, "POST", "/follows", follow(map[string]any{"sessionIds": []string{"other-1"}}))["error"])
	require.Equal(t, "forbidden_scope", n.expectAs(agent, http.StatusForbidden, "POST", "/follows", follow(map[string]any{"all": true}))["error"])
	require.Equal(t, "forbidden_scope", n.expectAs(agent, http.StatusForbidden, "POST", "/follows", follow(map[string]any{"cwdPrefix": "/"}))["error"])
	require.Equal(t, "forbidden_scope", n.expectAs(agent, http.StatusForbidden, "POST", "/follows",
		map[string]any{"follower": "other-1", "selector": map[string]any{"sessionIds": []string{"ag-1"}}})["error"])
	theirFollow := n.expect(http.StatusCreated, "POST", "/follows", map[string]any{"follower": "other-1", "selector": map[string]any{"all": true}})["id"].(string)
	n.expectAs(agent, http.StatusCreated, "POST", "/follows", follow(map[string]any{"sessionIds": []string{"ag-2"}}))
	follows := n.expectAs(agent, http.StatusOK, "GET", "/follows", nil)["follows"].([]any)
	require.Len(t, follows, 1)
	require.Equal(t, "ag-1", follows[0].(map[string]any)["follower"])
	require.Equal(t, "follow_not_found", n.expectAs(agent, http.StatusNotFound, "DELETE", "/follows/"+theirFollow, nil)["error"])
	require.Len(t, n.expect(http.StatusOK, "GET", "/follows", nil)["follows"].([]any), 2)

	// The operator's settings.
	require.Equal(t, "forbidden_scope", n.expectAs(agent, http.StatusForbidden, "POST", "/adapters/agentpush/setup", map[string]any{"fields": map[string]string{"apiKey": "ap_x"}})["error"])
	require.Equal(t, "forbidden_scope", n.expectAs(agent, http.StatusForbidden, "GET", "/cluster", nil)["error"])
	require.Equal(t, "forbidden_scope", n.expectAs(agent, http.StatusForbidden, "POST", "/cluster/remove", map[string]any{"node": "x"})["error"])
	require.Equal(t, "forbidden_scope", n.expectAs(agent, http.StatusForbidden, "POST", "/parked/prk_1/replay", nil)["error"])
	require.Equal(t, "forbidden_scope", n.expectAs(agent, http.StatusForbidden, "GET", "/metrics", nil)["error"])
	n.expectAs(agent, http.StatusOK, "GET", "/adapters", nil)
}

// A read token changes nothing (any state-changing route is refused
// before its handler, and an inbox read never moves the cursor) and sees
// what its prefix covers (everything without one).
func TestReadTokenChangesNothing(t *testing.T) {
	t.Parallel()
	n := startNode(t)
	reader := n.token("dashboard", "read", "")
	id := n.expect(http.StatusCreated, "POST", "/sentinels", watchBody("s1", "1"))["sentinel"].(map[string]any)["id"].(string)
	n.expect(http.StatusCreated, "POST", "/sessions/s1/messages", map[string]any{"text": "hello"})
	for _, r := range []struct {
		method, path string
		body         any
	}{{"POST", "/sentinels", watchBody("s1", "2")}, {"DELETE", "/sentinels/" + id, nil}, {"POST", "/sessions", map[string]any{"id": "s2"}},
		{"POST", "/sessions/s1/messages", map[string]any{"text": "x"}}, {"POST", "/follows", map[string]any{"follower": "s1", "selector": map[string]any{"all": true}}},
		{"POST", "/adapters/agentpush/setup", map[string]any{"fields": map[string]string{"apiKey": "x"}}}, {"POST", "/sentinels/poll?id=" + id, nil}} {
		require.Equal(t, "forbidden_scope", n.expectAs(reader, http.StatusForbidden, r.method, r.path, r.body)["error"], r)
	}
	n.expectAs(reader, http.StatusOK, "GET", "/sentinels/"+id, nil)
	n.expectAs(reader, http.StatusOK, "GET", "/cluster", nil)
	n.expectAs(reader, http.StatusOK, "GET", "/metrics", nil)
	got := n.expectAs(reader, http.StatusOK, "GET", "/sessions/s1/inbox?ack=true", nil)["messages"].([]any)
	require.Len(t, got, 1)
	again := n.expect(http.StatusOK, "GET", "/sessions/s1/inbox", nil)["messages"].([]any)
	require.Len(t, again, 1, "the read token's read did not move the cursor")

	scoped := n.token("one-team", "read", "team-")
	require.Empty(t, n.expectAs(scoped, http.StatusOK, "GET", "/sentinels", nil)["sentinels"].([]any), "none of its sessions")
	require.Equal(t, "sentinel_not_found", n.expectAs(scoped, http.StatusNotFound, "GET", "/sentinels/"+id, nil)["error"])
}

// Every node of a service accepts a named token made on another, and
// refuses it once it is revoked there.
func TestNamedTokensWorkOnEveryNode(t *testing.T) {
	apps := startCluster(t, clusterConfigs(t, 3))
	a, c := &node{t: t, app: apps[0]}, &node{t: t, app: apps[2]}
	tok := a.token("everywhere", "agent", "ag-")
	c.expectAs(tok, http.StatusCreated, "POST", "/sentinels", watchBody("ag-1", "9"))
	a.expect(http.StatusOK, "DELETE", "/tokens/everywhere", nil)
	bustest.Eventually(t, 10*time.Second, func() bool { got, _ := c.as(tok, "GET", "/sentinels", nil); return got == http.StatusUnauthorized },
		"the third node refuses the revoked token")
}
