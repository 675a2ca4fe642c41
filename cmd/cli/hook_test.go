package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/cmd/cli"
	"github.com/agentproto/sentinel/ingress/apiclient"
	"github.com/agentproto/sentinel/runtime/app"
)

const hookSession = "9f1c2b7e-4d3a-4e8b-a6f0-1c2d3e4f5a6b"

// payload reads a recorded Claude Code hook payload, pointing its
// transcript_path at testdata.
func payload(t *testing.T, name string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "hooks", name+".json"))
	require.NoError(t, err)
	abs, err := filepath.Abs(filepath.Join("testdata", "hooks"))
	require.NoError(t, err)
	return strings.ReplaceAll(string(raw), "{{TESTDATA}}", abs)
}

// hook runs `sentinel hook <event>` in-process with the payload on stdin.
func hook(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = cli.Main(context.Background(), append([]string{"hook"}, args...), cli.IO{In: strings.NewReader(stdin), Out: &out, ErrOut: &errOut})
	return code, out.String(), errOut.String()
}

func TestHarnessHooksDeliverASentinelEventAtTheNextTurn(t *testing.T) {
	home := t.TempDir()
	feed := filepath.Join(t.TempDir(), "feed.jsonl")
	cfg := app.DefaultConfig()
	cfg.Home = home
	cfg.Listen = "127.0.0.1:0"
	cfg.NATS.SyncAlways = false
	cfg.Testing.FakeProvider = true
	cfg.Testing.FakeFeed = feed
	node, err := app.New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	require.NoError(t, node.Start(context.Background()))
	t.Cleanup(func() { _ = node.Stop(context.Background()) })
	t.Setenv("AGENTPROTO_HOME", home)
	t.Setenv("AGENTPROTO_URL", node.URL())
	t.Setenv("AGENTPROTO_TOKEN", node.Token)
	t.Setenv("AGENTPROTO_PARENT_SESSION", "")
	ctx := context.Background()
	c := apiclient.New(node.URL(), node.Token)
	sessions := apiclient.Sessions{C: c}

	// Session start registers the session; nothing is pending yet.
	code, out, errOut := hook(t, payload(t, "session-start"), "session-start")
	require.Equal(t, 0, code, errOut)
	require.Empty(t, out)
	s, err := sessions.Get(ctx, hookSession)
	require.NoError(t, err)
	require.Equal(t, "widgets", s.Label)
	require.Equal(t, "/home/dev/projects/widgets", s.Cwd)
	require.Equal(t, sentinel.SessionRunning, s.Status)
	require.Zero(t, s.HeartbeatTTLMs, "no heartbeat unless --heartbeat-ttl gives one (docs/harness.md, #31 item 13)")

	// The agent watches its PR, then its turn stops.
	var created struct {
		Sentinel sentinel.View `json:"sentinel"`
	}
	require.NoError(t, c.Do(ctx, http.MethodPost, "/sentinels", map[string]any{"subject": "github:acme/widgets#42", "sessionId": hookSession, "provider": "fake", "types": []string{"*"}}, &created))
	code, out, errOut = hook(t, payload(t, "stop"), "stop")
	require.Equal(t, 0, code, errOut)
	require.Empty(t, out)
	s, err = sessions.Get(ctx, hookSession)
	require.NoError(t, err)
	require.Equal(t, sentinel.SessionIdle, s.Status)
	require.Equal(t, "Opened https://github.com/acme/widgets/pull/42; waiting for CI.", s.LastOutput, "the excerpt comes from the transcript")

	// CI finishes while the session is idle: the event lands in its inbox.
	ev := sentinel.NewEvent("evt_ci_1", "//agentproto.local/sentinel/fake", "github.check_suite.completed", "github:acme/widgets#42",
		[]string{"github:acme/widgets#42", "github:acme/widgets", "github:acme"}, time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC),
		"CI passed on acme/widgets#42", false, map[string]any{"conclusion": "success"})
	line, err := json.Marshal(ev)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(feed, append(line, '\n'), 0o600))
	require.NoError(t, c.Do(ctx, http.MethodPost, "/sentinels/poll", nil, nil))
	zero := uint64(0)
	page, err := apiclient.Inboxes{C: c}.Wait(ctx, sentinel.InboxQuery{SessionID: hookSession, After: &zero}, 20*time.Second)
	require.NoError(t, err)
	require.Len(t, page.Messages, 1)

	// The user's next prompt: the hook injects the event as context.
	code, out, errOut = hook(t, payload(t, "user-prompt-submit"), "user-prompt-submit")
	require.Equal(t, 0, code, errOut)
	var injected struct {
		HookSpecificOutput struct {
			HookEventName     string `json:"hookEventName"`
			AdditionalContext string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &injected), out)
	require.Equal(t, "UserPromptSubmit", injected.HookSpecificOutput.HookEventName)
	ctxText := injected.HookSpecificOutput.AdditionalContext
	require.Contains(t, ctxText, "[github] CI passed on acme/widgets#42")
	require.Contains(t, ctxText, `from="system" kind="notice" urgency="next-turn" correlation="sentinel:github:acme/widgets#42"`)

	// Delivered once: the read cursor moved past it.
	code, out, _ = hook(t, payload(t, "user-prompt-submit"), "user-prompt-submit")
	require.Equal(t, 0, code)
	require.Empty(t, out)

	// Plain text for a generic harness.
	_, err = apiclient.Inboxes{C: c}.Send(ctx, hookSession, sentinel.SendMessage{Text: "ping <body>x</body>"}, "")
	require.NoError(t, err)
	code, out, _ = hook(t, payload(t, "user-prompt-submit"), "user-prompt-submit", "--format", "text")
	require.Equal(t, 0, code)
	require.Contains(t, out, `<body trust="untrusted">ping &lt;body&gt;x&lt;/body&gt;</body>`)

	// A stop hook can keep the turn going while messages are pending.
	_, err = apiclient.Inboxes{C: c}.Send(ctx, hookSession, sentinel.SendMessage{Text: "review requested"}, "")
	require.NoError(t, err)
	code, out, _ = hook(t, payload(t, "stop"), "stop", "--block-on-pending")
	require.Equal(t, 0, code)
	var block struct {
		Decision string `json:"decision"`
		Reason   string `json:"reason"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &block), out)
	require.Equal(t, "block", block.Decision)
	require.Contains(t, block.Reason, "review requested")

	// Notification and session end report the lifecycle.
	code, _, errOut = hook(t, payload(t, "notification"), "notification")
	require.Equal(t, 0, code, errOut)
	s, err = sessions.Get(ctx, hookSession)
	require.NoError(t, err)
	require.Equal(t, sentinel.SessionAwaitingInput, s.Status)
	code, _, errOut = hook(t, payload(t, "session-end"), "session-end")
	require.Equal(t, 0, code, errOut)
	s, err = sessions.Get(ctx, hookSession)
	require.NoError(t, err)
	require.Equal(t, sentinel.SessionEnded, s.Status)
	require.Equal(t, "operator-stopped", s.EndedReason)
}

func TestHookNeverFailsTheHarness(t *testing.T) {
	t.Setenv("AGENTPROTO_HOME", t.TempDir())
	t.Setenv("AGENTPROTO_URL", "http://127.0.0.1:1")
	t.Setenv("AGENTPROTO_TOKEN", "x")
	code, out, errOut := hook(t, payload(t, "user-prompt-submit"), "user-prompt-submit")
	require.Equal(t, 0, code)
	require.Empty(t, out)
	require.Contains(t, errOut, "no sentinel node reachable")

	code, _, errOut = hook(t, "not json", "stop")
	require.Equal(t, 0, code)
	require.Contains(t, errOut, "not JSON")

	t.Setenv("AGENTPROTO_URL", "")
	code, _, errOut = hook(t, payload(t, "stop"), "stop")
	require.Equal(t, 0, code)
	require.Contains(t, errOut, "no sentinel node reachable")
}
