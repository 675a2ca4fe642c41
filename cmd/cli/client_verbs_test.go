package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/ingress/api"
)

// fakeNode answers one route and records the request.
type fakeNode struct {
	status int
	body   string
	method string
	path   string
	got    map[string]any
}

func (f *fakeNode) start(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.method, f.path = r.Method, r.URL.RequestURI()
		raw, _ := io.ReadAll(r.Body)
		f.got = nil
		_ = json.Unmarshal(raw, &f.got)
		if r.Header.Get("Authorization") != "Bearer tok" {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"error":"unauthorized","message":"missing or wrong bearer token"}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(f.status)
		_, _ = io.WriteString(w, f.body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// runVerb runs the root command with args against url and returns the exit
// code, stdout and stderr.
func runVerb(t *testing.T, url, stdin string, args ...string) (int, string, string) {
	t.Helper()
	t.Setenv("AGENTPROTO_HOME", t.TempDir())
	t.Setenv("AGENTPROTO_URL", url)
	t.Setenv("AGENTPROTO_TOKEN", "tok")
	t.Setenv(EnvSession, "")
	var out, errOut bytes.Buffer
	code := Main(context.Background(), args, IO{In: strings.NewReader(stdin), Out: &out, ErrOut: &errOut})
	return code, out.String(), errOut.String()
}

func TestClientVerbs(t *testing.T) {
	view := `{"id":"sen_1","provider":"fake","status":"active","match":[{"subject":"github:o/r#1"}],"until":{"kind":"subject_terminal"},"target":{"kind":"session","sessionId":"s1","urgency":"fyi"},"createdTs":1,"eventCount":2}`
	cases := []struct {
		name       string
		args       []string
		stdin      string
		status     int
		body       string
		wantCode   int
		wantMethod string
		wantPath   string
		wantBody   map[string]any
		wantOut    []string
		wantErr    []string
		wantNotOut []string
	}{
		{
			name: "watch pr", args: []string{"watch", "pr", "https://github.com/o/r/pull/1", "--session", "s1", "--urgency", "fyi", "--until", "closed", "--types", "a,b"},
			status: 201, body: `{"ok":true,"sentinel":` + view + `}`, wantMethod: "POST", wantPath: "/sentinels",
			wantBody: map[string]any{"prUrl": "https://github.com/o/r/pull/1", "sessionId": "s1", "urgency": "fyi", "until": map[string]any{"kind": "subject_terminal"}, "types": []any{"a", "b"}},
			wantOut:  []string{"Watching github:o/r#1 as sen_1", "target:    s1 (fyi)"},
		},
		{
			name: "watch subject --json prints the node's answer", args: []string{"watch", "github:o/r#1", "--session", "s1", "--json"},
			status: 201, body: `{"ok":true,"sentinel":` + view + `}`, wantMethod: "POST", wantPath: "/sentinels",
			wantBody: map[string]any{"subject": "github:o/r#1", "sessionId": "s1"},
			wantOut:  []string{`"ok": true`, `"id": "sen_1"`},
		},
		{
			name: "node refusal names the fix", args: []string{"watch", "github:o/r#1"},
			status: 400, body: `{"error":"no_caller_identity","message":"pass sessionId"}`, wantCode: api.ExitInvalid,
			wantErr: []string{"no_caller_identity: pass sessionId", "--session <id> or set AGENTPROTO_SESSION"},
		},
		{
			name: "not found with --json prints the error body", args: []string{"rm", "sen_x", "--json"},
			status: 404, body: `{"error":"sentinel_not_found","message":"sentinel not found"}`, wantCode: api.ExitNotFound,
			wantMethod: "DELETE", wantPath: "/sentinels/sen_x",
			wantOut: []string{`"error": "sentinel_not_found"`}, wantErr: []string{"sentinel list"},
		},
		{
			name: "list table", args: []string{"list"},
			status: 200, body: `{"ok":true,"sentinels":[` + view + `]}`, wantMethod: "GET", wantPath: "/sentinels?limit=500",
			wantOut: []string{"ID     PROVIDER  STATUS  SUBJECT       UNTIL             TARGET    EVENTS", "sen_1  fake      active  github:o/r#1  subject_terminal  s1 (fyi)  2"},
		},
		{
			name: "poll with id", args: []string{"poll", "sen_1"},
			status: 200, body: `{"ok":true,"polled":true,"sentinel":` + view + `}`, wantMethod: "POST", wantPath: "/sentinels/poll?id=sen_1",
			wantOut: []string{"Polled.", "id:"},
		},
		{
			name: "status --json names the sentinel at the top level", args: []string{"status", "sen_1", "--json"},
			status: 200, body: `{"ok":true,"status":{"ok":false,"detail":"backing off","status":"active","provider":"local-gh","lastError":"HTTP 502"}}`,
			wantMethod: "GET", wantPath: "/sentinels/sen_1/status",
			wantOut: []string{"{\n  \"ok\": true,\n  \"id\": \"sen_1\",\n  \"status\": {", `"provider": "local-gh"`, `"lastError": "HTTP 502"`},
		},
		{
			name: "status human", args: []string{"status", "sen_1"},
			status: 200, body: `{"ok":true,"id":"sen_1","status":{"ok":true,"status":"active","provider":"local-gh","extra":{"quotaRemaining":4999}}}`,
			wantMethod: "GET", wantPath: "/sentinels/sen_1/status",
			wantOut: []string{"sen_1", "local-gh", "quotaRemaining", "4999"},
		},
		{
			name: "status human shows each GitHub budget readably", args: []string{"status", "sen_1"},
			status: 200, body: `{"ok":true,"id":"sen_1","status":{"ok":true,"status":"active","provider":"local-gh","extra":{` +
				`"quota":[{"credential":"token","resource":"core","limit":5000,"remaining":4990,"used":10,"reset":"2026-11-01T11:00:00Z"},` +
				`{"credential":"installation:7","resource":"core","limit":5000,"remaining":12,"used":4988,"reset":"2026-11-01T11:00:00Z","pausedUntil":"2026-11-01T10:01:00Z"}],` +
				`"hook":{"id":3,"active":true}}}}`,
			wantMethod: "GET", wantPath: "/sentinels/sen_1/status",
			wantOut: []string{"token core 4990/5000 left (10 used), resets 2026-11-01T11:00:00Z; installation:7 core 12/5000 left (4988 used), resets 2026-11-01T11:00:00Z, paused until 2026-11-01T10:01:00Z",
				`{"active":true,"id":3}`},
			wantNotOut: []string{"map["},
		},
		{
			name: "status not found with --json prints the error body", args: []string{"status", "sen_x", "--json"},
			status: 404, body: `{"error":"sentinel_not_found","message":"sentinel not found"}`, wantCode: api.ExitNotFound,
			wantOut: []string{`"error": "sentinel_not_found"`}, wantErr: []string{"sentinel list"},
		},
		{
			name: "setup reads stdin and never prints the value", args: []string{"setup", "agentpush", "--field", "apiKey=-", "--field", "baseUrl=https://x"},
			stdin: "k-secret\n", status: 200, body: `{"ok":true,"setup":{"slug":"agentpush","stored":["apiKey","baseUrl"],"readiness":{"ready":false,"reason":"unreachable"}}}`,
			wantMethod: "POST", wantPath: "/adapters/agentpush/setup",
			wantBody: map[string]any{"fields": map[string]any{"apiKey": "k-secret", "baseUrl": "https://x"}},
			wantOut:  []string{"Configured agentpush (stored apiKey, baseUrl); not ready: unreachable"},
		},
		{
			name: "inbox wait query", args: []string{"inbox", "s1", "--wait", "5s", "--after", "3", "--correlation", "sentinel:github:o/r#1", "--ack"},
			status: 200, body: `{"ok":true,"messages":[],"next":3}`, wantMethod: "GET",
			wantPath: "/sessions/s1/inbox?ack=true&after=3&correlationId=sentinel%3Agithub%3Ao%2Fr%231&wait=5",
			wantOut:  []string{"No messages for s1 (waited 5s). next: 3"},
		},
		{
			name: "follow builds the selector", args: []string{"follow", "--follower", "chief", "--all", "--root-only=false", "--events", "exited", "--batch-ms", "0", "--include-children"},
			status: 201, body: `{"id":"fol_1","follower":"chief","createdAt":"2026-01-01T00:00:00Z","selector":{"all":true},"events":["exited"],"batchMs":0}`,
			wantMethod: "POST", wantPath: "/follows",
			wantBody: map[string]any{"follower": "chief", "selector": map[string]any{"all": true, "rootOnly": false}, "events": []any{"exited"}, "batchMs": float64(0), "excludeFollowerChildren": false},
			wantOut:  []string{"Following as fol_1"},
		},
		{
			name: "session end with reason", args: []string{"session", "end", "s1", "--reason", "forgotten"},
			status: 200, body: `{"ok":true,"session":{"id":"s1","status":"ended","endedReason":"forgotten"}}`,
			wantMethod: "DELETE", wantPath: "/sessions/s1?reason=forgotten", wantOut: []string{"Ended session s1 (forgotten)"},
		},
		{
			name: "poll --json prints what the typed call drops", args: []string{"poll", "sen_1", "--json"},
			status: 200, body: `{"ok":true,"polled":true,"sentinel":` + view + `}`, wantMethod: "POST", wantPath: "/sentinels/poll?id=sen_1",
			wantOut: []string{`"polled": true`, `"id": "sen_1"`},
		},
		{
			name: "an answer of another shape names the version", args: []string{"session", "show", "s1"},
			status: 200, body: `{"ok":true,"session":{"id":7}}`, wantCode: api.ExitError,
			wantMethod: "GET", wantPath: "/sessions/s1", wantErr: []string{"is the node the same version?"},
		},
		{name: "usage: bad until", args: []string{"watch", "github:o/r#1", "--until", "soon"}, wantCode: api.ExitUsage, wantErr: []string{"--until must be closed or never"}},
		{name: "usage: bad wait", args: []string{"inbox", "s1", "--wait", "50s"}, wantCode: api.ExitUsage, wantErr: []string{"--wait must be within 1s..49s"}},
		{name: "usage: no selector", args: []string{"follow", "--follower", "x"}, wantCode: api.ExitUsage, wantErr: []string{"--sessions a,b, --all, or --cwd-prefix"}},
		{name: "usage: missing id", args: []string{"status"}, wantCode: api.ExitUsage, wantErr: []string{"sentinel list"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeNode{status: tc.status, body: tc.body}
			url := f.start(t)
			code, out, errOut := runVerb(t, url, tc.stdin, tc.args...)
			require.Equalf(t, tc.wantCode, code, "stdout %q stderr %q", out, errOut)
			if tc.wantMethod != "" {
				require.Equal(t, tc.wantMethod, f.method)
				require.Equal(t, tc.wantPath, f.path)
			}
			for k, v := range tc.wantBody {
				require.Equal(t, v, f.got[k], k)
			}
			for _, s := range tc.wantOut {
				require.Contains(t, out, s)
			}
			for _, s := range tc.wantErr {
				require.Contains(t, errOut, s)
			}
			for _, s := range tc.wantNotOut {
				require.NotContains(t, out, s)
			}
			require.NotContains(t, out+errOut, "k-secret")
		})
	}
}

func TestBadTokenAndNoNode(t *testing.T) {
	f := &fakeNode{status: 200, body: `{"ok":true,"sentinels":[]}`}
	url := f.start(t)
	t.Setenv("AGENTPROTO_HOME", t.TempDir())
	t.Setenv("AGENTPROTO_URL", url)
	t.Setenv("AGENTPROTO_TOKEN", "wrong")
	var out, errOut bytes.Buffer
	code := Main(context.Background(), []string{"list"}, IO{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	require.Equal(t, api.ExitAuth, code)
	require.Contains(t, errOut.String(), "AGENTPROTO_TOKEN")

	code, _, errText := runVerb(t, "http://127.0.0.1:1", "", "list")
	require.Equal(t, api.ExitUnavailable, code)
	require.Contains(t, errText, "sentinel serve")
}

// A node that is not ready yet (waiting for its peers) answers every verb
// 503 not_ready: the CLI exits 6 and says to ask `sentinel health`.
func TestVerbOnANodeNotReady(t *testing.T) {
	f := &fakeNode{status: http.StatusServiceUnavailable,
		body: `{"error":"not_ready","message":"waiting for the JetStream meta leader with routes up to 0 other server(s)","reason":"waiting_for_peers"}`}
	code, _, errOut := runVerb(t, f.start(t), "", "list")
	require.Equal(t, api.ExitUnavailable, code, errOut)
	require.Contains(t, errOut, "waiting for the JetStream meta leader")
	require.Contains(t, errOut, "sentinel health")
}
