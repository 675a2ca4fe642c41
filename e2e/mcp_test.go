package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os/exec"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// The protocol versions the official Go SDK (v1.8.0) speaks: the current
// stateless era (server/discover) and the previous initialize-handshake
// version it falls back to. A client pins one with
// ClientSessionOptions.ProtocolVersion.
const (
	protoCurrent  = "2026-07-28"
	protoPrevious = "2025-11-25"
)

var allTools = []string{
	"inbox_read", "inbox_wait", "list_sentinel_adapters", "sentinel_explain", "sentinel_list", "sentinel_poll_now",
	"sentinel_unwatch", "sentinel_wait_for_event", "sentinel_watch", "session_follow", "session_follows", "session_unfollow",
	"setup_sentinel_provider",
}

// headerTransport adds the bearer token and the caller header; sent, when
// set, is told of every tools/call request it sends.
type headerTransport struct {
	token, session string
	sent           chan<- struct{}
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if h.sent != nil && r.Method == http.MethodPost {
		select {
		case h.sent <- struct{}{}:
		default:
		}
	}
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+h.token)
	if h.session != "" {
		r.Header.Set("X-Agentproto-Session", h.session)
	}
	return http.DefaultTransport.RoundTrip(r)
}

func TestMCP(t *testing.T) {
	n := startSurfaceNode(t)
	cases := []struct {
		transport, version string
		number             int
	}{
		{"stdio", protoCurrent, 101},
		{"stdio", protoPrevious, 102},
		{"http", protoCurrent, 103},
		{"http", protoPrevious, 104},
	}
	for _, tc := range cases {
		t.Run(tc.transport+"/"+tc.version, func(t *testing.T) {
			caller := fmt.Sprintf("mcp-%s-%d", tc.transport, tc.number)
			ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
			defer cancel()
			cs := connectMCP(ctx, t, n, tc.transport, tc.version, caller, tc.number%2 == 0)
			require.Equal(t, tc.version, cs.InitializeResult().ProtocolVersion, "negotiated protocol version")
			exerciseMCP(ctx, t, n, cs, caller, fmt.Sprintf("github:acme/widgets#%d", tc.number))
		})
	}
}

// connectMCP connects the SDK client over stdio (`sentinel mcp --session`)
// or streamable HTTP (caller in the X-Agentproto-Session header, or in the
// callerSessionId query parameter when byQuery), pinned to version.
func connectMCP(ctx context.Context, t *testing.T, n *surfaceNode, transport, version, caller string, byQuery bool) *sdk.ClientSession {
	t.Helper()
	client := sdk.NewClient(&sdk.Implementation{Name: "sentinel-e2e", Version: "1.0.0"}, nil)
	var tr sdk.Transport
	switch transport {
	case "stdio":
		cmd := exec.Command(binary, "mcp", "--session", caller)
		cmd.Env = n.env()
		tr = &sdk.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}
	case "http":
		endpoint := n.url + "/mcp"
		ht := headerTransport{token: n.token, session: caller}
		if byQuery {
			endpoint += "?callerSessionId=" + url.QueryEscape(caller)
			ht.session = ""
		}
		tr = &sdk.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: ht}, DisableStandaloneSSE: true}
	}
	cs, err := client.Connect(ctx, tr, &sdk.ClientSessionOptions{ProtocolVersion: version})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// call calls a tool and returns the decoded structured result.
func call(ctx context.Context, t *testing.T, cs *sdk.ClientSession, name string, args map[string]any) (map[string]any, bool) {
	t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err, name)
	raw, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	var out map[string]any
	require.NoError(t, json.Unmarshal(raw, &out), "%s structured content", name)
	// The text content carries the same JSON for clients that ignore
	// structured content.
	require.NotEmpty(t, res.Content, name)
	text, isText := res.Content[0].(*sdk.TextContent)
	require.True(t, isText, name)
	var fromText map[string]any
	require.NoError(t, json.Unmarshal([]byte(text.Text), &fromText), "%s text content", name)
	require.Equal(t, out, fromText, name)
	return out, res.IsError
}

func exerciseMCP(ctx context.Context, t *testing.T, n *surfaceNode, cs *sdk.ClientSession, caller, subject string) {
	tools, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	assertToolSchemas(t, tools.Tools)

	// Validation errors are tool results with readable messages.
	out, isErr := call(ctx, t, cs, "sentinel_watch", map[string]any{"provider": "fake"})
	require.True(t, isErr)
	require.Equal(t, false, out["ok"])
	require.Equal(t, "missing_subject", out["error"])
	require.True(t, strings.HasPrefix(out["message"].(string), "sentinel_watch: "), out["message"])
	out, isErr = call(ctx, t, cs, "sentinel_watch", map[string]any{"subject": subject, "prUrl": "https://github.com/acme/widgets/pull/1"})
	require.True(t, isErr)
	require.Equal(t, "ambiguous_subject", out["error"])
	out, isErr = call(ctx, t, cs, "sentinel_watch", map[string]any{"subject": subject, "urgency": "loud"})
	require.True(t, isErr)
	require.Equal(t, "invalid_urgency", out["error"])
	require.Contains(t, out["message"], "fyi, next-turn, steer, interrupt")
	out, isErr = call(ctx, t, cs, "sentinel_watch", map[string]any{"subject": 7})
	require.True(t, isErr)
	require.Equal(t, "invalid_input", out["error"])
	require.Equal(t, `sentinel_watch: argument "subject" must be a string, not a JSON number`, out["message"])
	out, isErr = call(ctx, t, cs, "sentinel_watch", map[string]any{"prUrl": "https://example.com/x"})
	require.True(t, isErr)
	require.Equal(t, "invalid_pr_url", out["error"])
	out, isErr = call(ctx, t, cs, "sentinel_watch", map[string]any{"subject": subject, "provider": "nope"})
	require.True(t, isErr)
	require.Equal(t, "unknown_provider", out["error"])

	// sessionId defaults to the caller's identity from the transport.
	out, isErr = call(ctx, t, cs, "sentinel_watch", map[string]any{"subject": subject, "provider": "fake", "urgency": "fyi", "label": "e2e"})
	require.False(t, isErr, out)
	require.Equal(t, true, out["ok"])
	id, _ := dig(out, "sentinel", "id").(string)
	require.True(t, strings.HasPrefix(id, "sen_"), out)
	require.Equal(t, caller, dig(out, "sentinel", "target", "sessionId"))
	require.Equal(t, "fyi", dig(out, "sentinel", "target", "urgency"))

	out, isErr = call(ctx, t, cs, "sentinel_list", nil)
	require.False(t, isErr)
	found := false
	for _, v := range out["sentinels"].([]any) {
		if dig(v, "id") == id {
			found = true
			require.Equal(t, "e2e", dig(v, "label"))
			require.Nil(t, dig(v, "handle"), "internal fields never leave the node")
		}
	}
	require.True(t, found, "sentinel_list shows %s", id)

	out, isErr = call(ctx, t, cs, "list_sentinel_adapters", nil)
	require.False(t, isErr)
	require.NotEmpty(t, out["adapters"])

	// A delivery, waited on by correlation id.
	correlation := "sentinel:" + subject
	eventID := n.emit(subject, "github.pull_request.synchronize")
	out, isErr = call(ctx, t, cs, "sentinel_poll_now", map[string]any{"id": id})
	require.False(t, isErr, out)
	require.Equal(t, true, out["polled"])
	start := time.Now()
	out, isErr = call(ctx, t, cs, "inbox_wait", map[string]any{"correlationId": correlation, "timeoutMs": 20000})
	require.False(t, isErr, out)
	require.Equal(t, false, out["timedOut"], out)
	msgs := out["messages"].([]any)
	require.Len(t, msgs, 1)
	require.Equal(t, correlation, dig(msgs, 0, "correlationId"))
	require.Equal(t, caller, dig(msgs, 0, "to"))
	require.Equal(t, eventID, dig(msgs, 0, "data", "id"))
	require.Less(t, time.Since(start), 15*time.Second)

	// A match already there returns at once.
	start = time.Now()
	out, isErr = call(ctx, t, cs, "inbox_wait", map[string]any{"correlationId": correlation, "timeoutMs": 30000})
	require.False(t, isErr, out)
	require.Len(t, out["messages"], 1)
	require.Less(t, time.Since(start), 5*time.Second, "inbox_wait with a match already there must not wait")

	out, isErr = call(ctx, t, cs, "inbox_read", map[string]any{"correlationId": correlation})
	require.False(t, isErr, out)
	require.Len(t, out["messages"], 1)

	out, isErr = call(ctx, t, cs, "inbox_wait", map[string]any{"timeoutMs": 3600001})
	require.True(t, isErr)
	require.Equal(t, "invalid_input", out["error"])
	require.Equal(t, "inbox_wait: timeoutMs must be within 1000..3600000 (got 3600001); one call waits at most 49000", out["message"])

	// sentinel_wait_for_event: the unread event of this sentinel comes at
	// once; after it, nothing within a second; the next event of the
	// subject comes when it lands.
	out, isErr = call(ctx, t, cs, "sentinel_wait_for_event", map[string]any{"sentinelId": id, "timeoutMs": 20000})
	require.False(t, isErr, out)
	require.Equal(t, false, out["timedOut"], out)
	require.Equal(t, eventID, dig(out, "event", "id"))
	require.Equal(t, id, dig(out, "message", "origin"))
	require.Contains(t, out["trust"], "untrusted")
	after := out["next"]
	out, isErr = call(ctx, t, cs, "sentinel_wait_for_event", map[string]any{"sentinelId": id, "after": after, "timeoutMs": 1000})
	require.False(t, isErr, out)
	require.Equal(t, true, out["timedOut"], out)
	require.Nil(t, out["nextWaitMs"])
	second := n.emit(subject, "github.pull_request.synchronize")
	_, isErr = call(ctx, t, cs, "sentinel_poll_now", map[string]any{"id": id})
	require.False(t, isErr)
	out, isErr = call(ctx, t, cs, "sentinel_wait_for_event", map[string]any{"subject": subject, "after": after, "timeoutMs": 120000})
	require.False(t, isErr, out)
	require.Equal(t, second, dig(out, "event", "id"), out)
	out, isErr = call(ctx, t, cs, "sentinel_wait_for_event", map[string]any{"sentinelId": "sen_00000000000000000000000000"})
	require.True(t, isErr)
	require.Equal(t, "not_found", out["error"])

	// Unknown ids are not_found, reported as tool errors.
	out, isErr = call(ctx, t, cs, "sentinel_unwatch", map[string]any{"id": "sen_00000000000000000000000000"})
	require.True(t, isErr)
	require.Equal(t, "not_found", out["error"])
	out, isErr = call(ctx, t, cs, "sentinel_poll_now", map[string]any{"id": "sen_00000000000000000000000000"})
	require.True(t, isErr)
	require.Equal(t, "not_found", out["error"])
	out, isErr = call(ctx, t, cs, "sentinel_unwatch", map[string]any{})
	require.True(t, isErr)
	require.Equal(t, "invalid_input", out["error"])

	out, isErr = call(ctx, t, cs, "sentinel_unwatch", map[string]any{"id": id})
	require.False(t, isErr, out)
	require.Equal(t, true, out["removed"])
	require.Equal(t, id, out["id"])

	// Follows: the follower defaults to the caller, which must be known.
	out, isErr = call(ctx, t, cs, "session_follow", map[string]any{"selector": map[string]any{"all": true}})
	require.True(t, isErr)
	require.Equal(t, "session_not_found", out["error"])
	status, _ := n.api("POST", "/sessions", map[string]any{"id": caller})
	require.Equal(t, http.StatusCreated, status)
	key := caller + "-key"
	out, isErr = call(ctx, t, cs, "session_follow", map[string]any{"key": key, "selector": map[string]any{"sessionIds": []any{"other"}}, "events": []any{"exited"}})
	require.False(t, isErr, out)
	require.Equal(t, true, out["created"])
	require.Equal(t, caller, dig(out, "follow", "follower"))
	folID := dig(out, "follow", "id").(string)
	out, isErr = call(ctx, t, cs, "session_follow", map[string]any{"key": key, "selector": map[string]any{"all": true}})
	require.False(t, isErr, out)
	require.Equal(t, false, out["created"], "re-using a key updates in place")
	require.Equal(t, folID, dig(out, "follow", "id"))
	out, isErr = call(ctx, t, cs, "session_follows", map[string]any{"follower": caller})
	require.False(t, isErr, out)
	require.Len(t, out["follows"], 1)
	out, isErr = call(ctx, t, cs, "session_unfollow", map[string]any{"id": key})
	require.False(t, isErr, out)
	require.Equal(t, folID, out["id"])
	out, isErr = call(ctx, t, cs, "session_unfollow", map[string]any{"id": key})
	require.True(t, isErr)
	require.Equal(t, "not_found", out["error"])

	// A target session that has ended is refused.
	status, _ = n.api("DELETE", "/sessions/"+caller+"?reason=operator-completed", nil)
	require.Equal(t, http.StatusOK, status)
	out, isErr = call(ctx, t, cs, "sentinel_watch", map[string]any{"subject": subject, "provider": "fake"})
	require.True(t, isErr)
	require.Equal(t, "session_not_alive", out["error"])
}

// assertToolSchemas pins the tools/list answer: every tool, its input
// schema (mcp-go can silently emit an empty one) and its annotations.
func assertToolSchemas(t *testing.T, tools []*sdk.Tool) {
	t.Helper()
	byName := map[string]*sdk.Tool{}
	var names []string
	for _, tl := range tools {
		byName[tl.Name] = tl
		names = append(names, tl.Name)
	}
	sort.Strings(names)
	require.Equal(t, allTools, names)

	schema := func(name string) map[string]any {
		raw, err := json.Marshal(byName[name].InputSchema)
		require.NoError(t, err)
		var m map[string]any
		require.NoError(t, json.Unmarshal(raw, &m))
		require.Equal(t, "object", m["type"], name)
		require.Equal(t, false, m["additionalProperties"], name)
		return m
	}
	props := func(m map[string]any) []string {
		p, _ := m["properties"].(map[string]any)
		var out []string
		for k := range p {
			out = append(out, k)
		}
		sort.Strings(out)
		return out
	}

	w := schema("sentinel_watch")
	require.Equal(t, []string{"allowDuplicate", "batchMs", "dryRun", "group", "key", "label", "muteSelf", "prUrl", "provider", "sessionId", "subject", "types", "until", "urgency"}, props(w))
	require.Nil(t, w["required"], "sentinel_watch takes subject or prUrl: nothing is required by the schema")
	require.Equal(t, "array", dig(w, "properties", "types", "type"))
	require.Equal(t, "string", dig(w, "properties", "types", "items", "type"))
	require.Equal(t, []any{"fyi", "next-turn", "steer", "interrupt"}, dig(w, "properties", "urgency", "enum"))
	require.Equal(t, []any{"subject_terminal", "never"}, dig(w, "properties", "until", "enum"))
	require.NotEmpty(t, dig(w, "properties", "prUrl", "description"))

	l := schema("sentinel_list")
	require.Equal(t, []string{"provider", "session", "status", "subject"}, props(l), "optional filters only")
	require.Nil(t, l["required"])
	require.Equal(t, []any{"active", "paused", "expired", "orphaned", "error"}, dig(l, "properties", "status", "enum"))
	require.Empty(t, props(schema("list_sentinel_adapters")))
	u := schema("sentinel_unwatch")
	require.Equal(t, []string{"id"}, props(u))
	require.Equal(t, []any{"id"}, u["required"])
	p := schema("sentinel_poll_now")
	require.Equal(t, []string{"id"}, props(p))
	require.Nil(t, p["required"])
	s := schema("setup_sentinel_provider")
	require.Equal(t, []string{"fields", "slug"}, props(s))
	require.Equal(t, "string", dig(s, "properties", "fields", "additionalProperties", "type"))

	f := schema("session_follow")
	require.Equal(t, []string{"batchMs", "events", "exclude", "excludeFollowerChildren", "follower", "key", "selector", "skipEmptyTurns"}, props(f))
	require.Equal(t, []any{"selector"}, f["required"])
	require.Equal(t, "integer", dig(f, "properties", "batchMs", "type"))
	sel, _ := dig(f, "properties", "selector").(map[string]any)
	require.Equal(t, []string{"all", "cwdPrefix", "rootOnly", "sessionIds"}, props(sel))
	require.Equal(t, []string{"id"}, props(schema("session_unfollow")))
	require.Equal(t, []string{"follower"}, props(schema("session_follows")))

	iw := schema("inbox_wait")
	require.Equal(t, []string{"ack", "after", "correlationId", "sessionId", "timeoutMs"}, props(iw))
	require.Equal(t, "integer", dig(iw, "properties", "timeoutMs", "type"))
	require.Equal(t, []string{"ack", "after", "correlationId", "limit", "sessionId"}, props(schema("inbox_read")))

	// Annotations are set on purpose (mcp-go defaults to destructive and
	// open-world): readOnly, destructive, idempotent, openWorld.
	want := map[string][4]bool{
		"sentinel_watch":          {false, false, true, true},
		"sentinel_list":           {true, false, true, false},
		"sentinel_unwatch":        {false, true, true, true},
		"sentinel_poll_now":       {false, false, true, true},
		"list_sentinel_adapters":  {true, false, true, false},
		"setup_sentinel_provider": {false, true, true, false},
		"session_follow":          {false, false, false, false},
		"session_unfollow":        {false, true, true, false},
		"session_follows":         {true, false, true, false},
		"inbox_read":              {false, false, false, false},
		"inbox_wait":              {false, false, false, false},
		"sentinel_wait_for_event": {true, false, false, false},
	}
	for name, hints := range want {
		a := byName[name].Annotations
		require.NotNil(t, a, name)
		require.NotNil(t, a.DestructiveHint, name)
		require.NotNil(t, a.OpenWorldHint, name)
		require.Equal(t, hints, [4]bool{a.ReadOnlyHint, *a.DestructiveHint, a.IdempotentHint, *a.OpenWorldHint}, name)
		require.NotEmpty(t, byName[name].Description, name)
	}
}

// TestMCPInboxWaitEndsWhenTheNodeStops: a pending inbox_wait over HTTP
// answers "unavailable" as soon as the node is told to stop, and the
// node does not wait for it to time out.
func TestMCPInboxWaitEndsWhenTheNodeStops(t *testing.T) {
	n := startSurfaceNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := sdk.NewClient(&sdk.Implementation{Name: "sentinel-e2e", Version: "1.0.0"}, nil)
	sent := make(chan struct{}, 1)
	tr := &sdk.StreamableClientTransport{Endpoint: n.url + "/mcp", DisableStandaloneSSE: true,
		HTTPClient: &http.Client{Transport: headerTransport{token: n.token, session: "mcp-stop"}}}
	cs, err := client.Connect(ctx, tr, nil)
	require.NoError(t, err)
	defer cs.Close()
	tr.HTTPClient.Transport = headerTransport{token: n.token, session: "mcp-stop", sent: sent}
	type result struct {
		out   map[string]any
		isErr bool
		err   error
	}
	done := make(chan result, 1)
	go func() {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "inbox_wait", Arguments: map[string]any{"timeoutMs": 45000}})
		if err != nil {
			done <- result{err: err}
			return
		}
		raw, _ := json.Marshal(res.StructuredContent)
		var out map[string]any
		_ = json.Unmarshal(raw, &out)
		done <- result{out: out, isErr: res.IsError}
	}()
	select {
	case <-sent:
	case <-time.After(10 * time.Second):
		t.Fatal("the call was never sent")
	}
	// Wait until the node is inside the call (its debug log says so).
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(n.Logs.String(), `msg="mcp tool call" component=mcp tool=inbox_wait`) {
		require.True(t, time.Now().Before(deadline), "the node never started the call")
		time.Sleep(10 * time.Millisecond)
	}
	start := time.Now()
	require.NoError(t, n.Cmd.Process.Signal(syscall.SIGTERM))
	select {
	case r := <-done:
		require.NoError(t, r.err)
		require.True(t, r.isErr, r.out)
		require.Equal(t, "unavailable", r.out["error"])
	case <-time.After(10 * time.Second):
		t.Fatal("inbox_wait did not end when the node stopped")
	}
	select {
	case <-n.Done:
	case <-time.After(10 * time.Second):
		t.Fatal("the node did not stop")
	}
	require.Less(t, time.Since(start), 10*time.Second)
}

// TestMCPStdioSessionAuto: `sentinel mcp --session auto` finds the calling
// session by its working directory, as an MCP client that spawns servers
// in the project folder (Claude Code) needs.
func TestMCPStdioSessionAuto(t *testing.T) {
	n := startSurfaceNode(t)
	proj := t.TempDir()
	status, _ := n.api("POST", "/sessions", map[string]any{"id": "auto-proj", "cwd": proj})
	require.Equal(t, http.StatusCreated, status)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.Command(binary, "mcp", "--session", "auto")
	cmd.Env = n.env()
	cmd.Dir = proj
	client := sdk.NewClient(&sdk.Implementation{Name: "sentinel-e2e", Version: "1.0.0"}, nil)
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, nil)
	require.NoError(t, err)
	defer cs.Close()
	out, isErr := call(ctx, t, cs, "sentinel_watch", map[string]any{"subject": "github:acme/widgets#301", "provider": "fake"})
	require.False(t, isErr, out)
	require.Equal(t, "auto-proj", dig(out, "sentinel", "target", "sessionId"))
}
