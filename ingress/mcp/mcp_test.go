package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/api"
	smcp "github.com/agentproto/sentinel/ingress/mcp"
)

// fakeServices records calls and answers from scripted values.
type fakeServices struct {
	mu        sync.Mutex
	watch     sentinel.WatchRequest
	caller    string
	setup     map[string]string
	follow    sentinel.FollowRequest
	followBy  string
	query     sentinel.InboxQuery
	timeout   time.Duration
	removeErr error
	setupErr  error
	listErr   error
	listQuery api.SentinelQuery
	page      api.InboxPage
	block     bool
}

func (f *fakeServices) Watch(_ context.Context, req sentinel.WatchRequest, caller string) (sentinel.View, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.watch, f.caller = req, caller
	spec, err := req.Expand(caller)
	if err != nil {
		return sentinel.View{}, err
	}
	return sentinel.View{ID: "sen_1", Provider: "fake", Status: sentinel.StatusActive, Match: spec.Match, Until: spec.Until, Target: spec.Target}, nil
}

func (f *fakeServices) List(context.Context) ([]sentinel.View, error) { return nil, f.listErr }
func (f *fakeServices) ListPage(_ context.Context, q api.SentinelQuery) (api.SentinelPage, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.listQuery = q
	return api.SentinelPage{}, f.listErr
}
func (f *fakeServices) Get(context.Context, string) (sentinel.View, error) {
	return sentinel.View{}, nil
}
func (f *fakeServices) Remove(context.Context, string) error { return f.removeErr }
func (f *fakeServices) Status(context.Context, string) (api.SentinelStatus, error) {
	return api.SentinelStatus{}, nil
}
func (f *fakeServices) PollNow(_ context.Context, id string) (*sentinel.View, error) {
	if id == "sen_missing" {
		return nil, sentinel.Errorf(sentinel.CodeSentinelNotFound, "sentinel not found")
	}
	return nil, nil
}
func (f *fakeServices) Adapters(context.Context) ([]api.Adapter, error) { return nil, nil }
func (f *fakeServices) Setup(_ context.Context, slug string, fields map[string]string) (api.SetupResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.setup = fields
	if f.setupErr != nil {
		return api.SetupResult{}, f.setupErr
	}
	var names []string
	for k := range fields {
		names = append(names, k)
	}
	return api.SetupResult{Slug: slug, Stored: names}, nil
}
func (f *fakeServices) Parked(context.Context, string, int) ([]sentinel.Parked, error) {
	return nil, nil
}

func (f *fakeServices) Upsert(_ context.Context, req sentinel.FollowRequest, caller string) (sentinel.Follow, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.follow, f.followBy = req, caller
	follower := req.Follower
	if follower == "" {
		follower = caller
	}
	return sentinel.Follow{ID: "fol_1", Follower: follower, Selector: req.Selector}, true, nil
}

type fakeFollows struct{ *fakeServices }

func (f fakeFollows) List(context.Context, string) ([]sentinel.Follow, error) { return nil, nil }
func (f fakeFollows) Remove(_ context.Context, idOrKey string) (string, error) {
	if idOrKey == "nope" {
		return "", sentinel.Errorf(sentinel.CodeFollowNotFound, "follow not found")
	}
	return "fol_1", nil
}

type fakeInbox struct{ *fakeServices }

func (f fakeInbox) Send(context.Context, string, sentinel.SendMessage, string) (sentinel.Message, error) {
	return sentinel.Message{}, nil
}
func (f fakeInbox) Read(_ context.Context, q sentinel.InboxQuery) (api.InboxPage, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.query = q
	return f.page, nil
}
func (f fakeInbox) Wait(ctx context.Context, q sentinel.InboxQuery, timeout time.Duration) (api.InboxPage, error) {
	f.mu.Lock()
	f.query, f.timeout = q, timeout
	block, page := f.block, f.page
	f.mu.Unlock()
	if block {
		<-ctx.Done()
		return api.InboxPage{}, context.Cause(ctx)
	}
	return page, nil
}
func (f fakeInbox) Done() <-chan struct{} { return nil }

func services(f *fakeServices) smcp.Services {
	return smcp.Services{Sentinels: f, Follows: fakeFollows{f}, Inbox: fakeInbox{f}}
}

type headers map[string]string

func (h headers) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// connectHTTP serves the tools over httptest and connects the official
// SDK client, pinned to version.
func connectHTTP(t *testing.T, life context.Context, f *fakeServices, query string, h headers, version string) *sdk.ClientSession {
	t.Helper()
	srv := httptest.NewServer(smcp.HTTPHandler(smcp.NewServer(services(f), smcp.Options{Life: life}), nil, 0))
	t.Cleanup(srv.Close)
	c := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: srv.URL + query, HTTPClient: &http.Client{Transport: h}, DisableStandaloneSSE: true},
		&sdk.ClientSessionOptions{ProtocolVersion: version})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func callTool(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any) (map[string]any, bool, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err)
	text := res.Content[0].(*sdk.TextContent).Text
	var out map[string]any
	require.NoError(t, json.Unmarshal([]byte(text), &out))
	return out, res.IsError, text
}

func TestCallerIdentityComesFromTheTransport(t *testing.T) {
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(version, func(t *testing.T) {
			cases := []struct {
				name, query string
				h           headers
				want        string
			}{
				{"header", "", headers{smcp.HeaderSession: "from-header"}, "from-header"},
				{"query", "?callerSessionId=from-query", headers{}, "from-query"},
				{"query wins", "?callerSessionId=from-query", headers{smcp.HeaderSession: "from-header"}, "from-query"},
				{"none", "", headers{}, ""},
			}
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					f := &fakeServices{}
					cs := connectHTTP(t, context.Background(), f, tc.query, tc.h, version)
					out, isErr, _ := callTool(t, cs, smcp.ToolWatch, map[string]any{"subject": "github:o/r#1"})
					if tc.want == "" {
						require.True(t, isErr)
						require.Equal(t, "no_caller_identity", out["error"], "the MCP session id is never the caller")
						return
					}
					require.False(t, isErr, out)
					require.Equal(t, tc.want, f.caller)
					require.Equal(t, tc.want, dig(out, "sentinel", "target", "sessionId"))
				})
			}
		})
	}
}

func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	return v
}

func TestDNSRebindingProtectionStaysOn(t *testing.T) {
	srv := httptest.NewServer(smcp.HTTPHandler(smcp.NewServer(services(&fakeServices{}), smcp.Options{}), nil, 0))
	defer srv.Close()
	req, err := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	require.NoError(t, err)
	req.Host = "evil.example"
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
}

func TestToolErrors(t *testing.T) {
	f := &fakeServices{}
	cs := connectHTTP(t, context.Background(), f, "", headers{smcp.HeaderSession: "s1"}, "2026-07-28")
	cases := []struct {
		name, tool string
		args       map[string]any
		setup      func()
		code, msg  string
	}{
		{"missing subject", smcp.ToolWatch, map[string]any{}, nil, "missing_subject", "sentinel_watch: give a subject"},
		{"unknown argument", smcp.ToolWatch, map[string]any{"subjet": "x"}, nil, "invalid_input", `sentinel_watch: unknown argument "subjet"`},
		{"wrong type", smcp.ToolWatch, map[string]any{"types": "a,b"}, nil, "invalid_input", `sentinel_watch: argument "types" must be an array, not a JSON string`},
		{"bad urgency", smcp.ToolWatch, map[string]any{"subject": "github:o/r#1", "urgency": "now"}, nil, "invalid_urgency", "sentinel_watch: urgency must be one of"},
		{"bad until", smcp.ToolWatch, map[string]any{"subject": "github:o/r#1", "until": "at"}, nil, "invalid_until", "sentinel_watch: until must be subject_terminal or never"},
		{"empty type", smcp.ToolWatch, map[string]any{"subject": "github:o/r#1", "types": []any{""}}, nil, "invalid_types", "sentinel_watch: types[0] is empty"},
		{"unwatch without id", smcp.ToolUnwatch, map[string]any{}, nil, "invalid_input", "sentinel_unwatch: id is required"},
		{"unwatch unknown", smcp.ToolUnwatch, map[string]any{"id": "sen_x"}, func() {
			f.removeErr = sentinel.Errorf(sentinel.CodeSentinelNotFound, "sentinel not found")
		}, "not_found", "sentinel_unwatch: sentinel not found"},
		{"poll unknown", smcp.ToolPollNow, map[string]any{"id": "sen_missing"}, nil, "not_found", "sentinel_poll_now: "},
		{"internal errors do not leak", smcp.ToolList, map[string]any{}, func() {
			f.listErr = errors.New("nats: connection closed at 10.0.0.1")
		}, "internal", "sentinel_list: internal error"},
		{"list bad status", smcp.ToolList, map[string]any{"status": "sleeping"}, nil, "invalid_input", "sentinel_list: status must be one of"},
		{"list bad session", smcp.ToolList, map[string]any{"session": "a.b"}, nil, "invalid_session_id", "sentinel_list: session"},
		{"setup without fields", smcp.ToolSetup, map[string]any{"slug": "agentpush"}, nil, "invalid_input", "setup_sentinel_provider: fields is required"},
		{"follow without selector", smcp.ToolFollow, map[string]any{"selector": map[string]any{}}, nil, "invalid_selector", "session_follow: selector needs"},
		{"follow bad event", smcp.ToolFollow, map[string]any{"selector": map[string]any{"all": true}, "events": []any{"born"}}, nil, "invalid_input", `session_follow: events: "born" is not a follow event`},
		{"follow bad batch", smcp.ToolFollow, map[string]any{"selector": map[string]any{"all": true}, "batchMs": 600001}, nil, "invalid_input", "session_follow: batchMs must be within 0..600000"},
		{"unfollow unknown", smcp.ToolUnfollow, map[string]any{"id": "nope"}, nil, "not_found", "session_unfollow: follow not found"},
		{"wait too short", smcp.ToolInboxWait, map[string]any{"timeoutMs": 999}, nil, "invalid_input", "inbox_wait: timeoutMs must be within 1000..3600000 (got 999)"},
		{"wait too long", smcp.ToolInboxWait, map[string]any{"timeoutMs": 3600001}, nil, "invalid_input", "inbox_wait: timeoutMs must be within 1000..3600000 (got 3600001); one call waits at most 49000"},
		{"wait for event without target", smcp.ToolWaitForEvent, map[string]any{}, nil, "invalid_input", "sentinel_wait_for_event: give sentinelId or subject"},
		{"read bad limit", smcp.ToolInboxRead, map[string]any{"limit": 501}, nil, "invalid_input", "inbox_read: limit must be within 1..500"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f.removeErr, f.listErr = nil, nil
			if tc.setup != nil {
				tc.setup()
			}
			out, isErr, _ := callTool(t, cs, tc.tool, tc.args)
			require.True(t, isErr, out)
			require.Equal(t, false, out["ok"])
			require.Equal(t, tc.code, out["error"])
			require.Contains(t, out["message"], tc.msg)
		})
	}
}

// sentinel_list keeps the spec's answer (every sentinel, unpaged) and
// passes its optional filters to the service.
func TestListFilters(t *testing.T) {
	f := &fakeServices{}
	cs := connectHTTP(t, context.Background(), f, "", headers{smcp.HeaderSession: "s1"}, "2026-07-28")
	out, isErr, _ := callTool(t, cs, smcp.ToolList, map[string]any{"status": "error", "provider": "local-gh", "session": "s2", "subject": "github:acme/"})
	require.False(t, isErr, out)
	require.Equal(t, []any{}, out["sentinels"])
	require.NotContains(t, out, "next", "the tool does not page")
	require.Equal(t, api.SentinelQuery{Status: sentinel.StatusError, Provider: "local-gh", Session: "s2", SubjectPrefix: "github:acme/"}, f.listQuery)

	f.listQuery = api.SentinelQuery{}
	out, isErr, _ = callTool(t, cs, smcp.ToolList, map[string]any{})
	require.False(t, isErr, out)
	require.Equal(t, api.SentinelQuery{}, f.listQuery, "no filter: the plain list")
}

func TestSetupNeverEchoesValues(t *testing.T) {
	f := &fakeServices{}
	cs := connectHTTP(t, context.Background(), f, "", headers{}, "2026-07-28")
	out, isErr, text := callTool(t, cs, smcp.ToolSetup, map[string]any{"slug": "agentpush", "fields": map[string]any{"apiKey": "s3cret-value"}})
	require.False(t, isErr, out)
	require.Equal(t, "s3cret-value", f.setup["apiKey"])
	require.NotContains(t, text, "s3cret-value")
	require.Equal(t, []any{"apiKey"}, dig(out, "setup", "stored"))

	out, isErr, text = callTool(t, cs, smcp.ToolSetup, map[string]any{"slug": "agentpush", "fields": map[string]any{"apiKey": 12345}})
	require.True(t, isErr)
	require.Equal(t, "invalid_input", out["error"])
	require.NotContains(t, text, "12345")
}

func TestInboxTools(t *testing.T) {
	f := &fakeServices{page: api.InboxPage{Messages: []sentinel.Message{{ID: "msg_1", Seq: 3, To: "s1"}}, Next: 3}}
	cs := connectHTTP(t, context.Background(), f, "", headers{smcp.HeaderSession: "s1"}, "2025-11-25")

	out, isErr, _ := callTool(t, cs, smcp.ToolInboxWait, map[string]any{})
	require.False(t, isErr, out)
	require.Equal(t, false, out["timedOut"])
	require.Equal(t, float64(3), out["next"])
	require.Equal(t, "s1", f.query.SessionID)
	require.True(t, f.query.Ack, "inbox_wait acks by default")
	require.Nil(t, f.query.After)
	require.Equal(t, 25*time.Second, f.timeout)

	_, isErr, _ = callTool(t, cs, smcp.ToolInboxWait, map[string]any{"sessionId": "other", "correlationId": "sentinel:github:o/r#1", "timeoutMs": 1000, "after": 2})
	require.False(t, isErr)
	require.Equal(t, "other", f.query.SessionID)
	require.False(t, f.query.Ack, "a correlation filter never acks")
	require.Equal(t, uint64(2), *f.query.After)
	require.Equal(t, time.Second, f.timeout)

	f.page = api.InboxPage{Next: 3, TimedOut: true}
	out, _, _ = callTool(t, cs, smcp.ToolInboxWait, map[string]any{"ack": false})
	require.Equal(t, true, out["timedOut"])
	require.Equal(t, []any{}, out["messages"])
	require.False(t, f.query.Ack)
	require.Nil(t, out["nextWaitMs"], "a wait that ran its course leaves nothing to wait")

	// A wait longer than a client's tool timeout is capped at 49 s; the
	// rest comes back as nextWaitMs.
	out, _, _ = callTool(t, cs, smcp.ToolInboxWait, map[string]any{"timeoutMs": 120000})
	require.Equal(t, api.MaxWait, f.timeout)
	require.Equal(t, true, out["timedOut"])
	require.Equal(t, float64(71000), out["nextWaitMs"])

	out, isErr, _ = callTool(t, cs, smcp.ToolInboxRead, map[string]any{"limit": 10})
	require.False(t, isErr, out)
	require.Nil(t, out["timedOut"])
	require.Equal(t, 10, f.query.Limit)
	require.False(t, f.query.Ack, "inbox_read does not ack by default")
}

func TestFollowDefaultsToTheCaller(t *testing.T) {
	f := &fakeServices{}
	cs := connectHTTP(t, context.Background(), f, "?callerSessionId=chief", headers{}, "2026-07-28")
	out, isErr, _ := callTool(t, cs, smcp.ToolFollow, map[string]any{"selector": map[string]any{"all": true, "rootOnly": false}, "batchMs": 0})
	require.False(t, isErr, out)
	require.Equal(t, true, out["created"])
	require.Equal(t, "chief", dig(out, "follow", "follower"))
	require.Equal(t, "chief", f.followBy)
	require.NotNil(t, f.follow.Selector.RootOnly)
	require.False(t, *f.follow.Selector.RootOnly)
	require.Equal(t, 0, *f.follow.BatchMs)
}

func TestLongCallsEndWithTheNode(t *testing.T) {
	f := &fakeServices{block: true}
	life, stop := context.WithCancel(context.Background())
	cs := connectHTTP(t, life, f, "", headers{smcp.HeaderSession: "s1"}, "2026-07-28")
	done := make(chan map[string]any, 1)
	go func() {
		out, _, _ := callTool(t, cs, smcp.ToolInboxWait, map[string]any{"timeoutMs": 49000})
		done <- out
	}()
	require.Eventually(t, func() bool { f.mu.Lock(); defer f.mu.Unlock(); return f.timeout > 0 }, 5*time.Second, 10*time.Millisecond)
	stop()
	select {
	case out := <-done:
		require.Equal(t, "unavailable", out["error"])
	case <-time.After(5 * time.Second):
		t.Fatal("inbox_wait did not end when the node stopped")
	}
}

func TestStdioCarriesTheSessionFlag(t *testing.T) {
	f := &fakeServices{}
	cIn, sOut := io.Pipe()
	sIn, cOut := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		errc <- smcp.ServeStdio(ctx, smcp.NewServer(services(f), smcp.Options{}), "stdio-s1", sIn, sOut)
	}()
	c := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &sdk.IOTransport{Reader: cIn, Writer: cOut}, nil)
	require.NoError(t, err)
	out, isErr, _ := callTool(t, cs, smcp.ToolWatch, map[string]any{"prUrl": "https://github.com/o/r/pull/3"})
	require.False(t, isErr, out)
	require.Equal(t, "stdio-s1", f.caller)
	require.Equal(t, "https://github.com/o/r/pull/3", f.watch.PRURL)
	match, _ := dig(out, "sentinel", "match").([]any)
	require.Len(t, match, 1)
	require.Equal(t, "github:o/r#3", dig(match[0], "subject"))
	_ = cs.Close()
	_ = cOut.Close()
	cancel()
	select {
	case <-errc:
	case <-time.After(5 * time.Second):
		t.Fatal("stdio server did not stop")
	}
}
