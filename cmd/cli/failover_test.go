package cli_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/cmd/cli"
	"github.com/agentproto/sentinel/ingress/apiclient"
	"github.com/agentproto/sentinel/runtime/app"
)

// goneURL is a node that is gone (connection refused).
func goneURL(t *testing.T) string {
	srv := httptest.NewServer(http.NotFoundHandler())
	u := srv.URL
	srv.Close()
	return u
}

func startAppNode(t *testing.T) *app.App {
	t.Helper()
	cfg := app.DefaultConfig()
	cfg.Home = t.TempDir()
	cfg.Listen = "127.0.0.1:0"
	cfg.NATS.SyncAlways = false
	cfg.Testing.FakeProvider = true
	node, err := app.New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	require.NoError(t, node.Start(context.Background()))
	t.Cleanup(func() { _ = node.Stop(context.Background()) })
	return node
}

// The hook registers the session through the live node of the list.
func TestHookFailsOverToTheNextNode(t *testing.T) {
	node := startAppNode(t)
	t.Setenv("AGENTPROTO_HOME", t.TempDir())
	t.Setenv("AGENTPROTO_URL", goneURL(t)+","+node.URL())
	t.Setenv("AGENTPROTO_TOKEN", node.Token)
	t.Setenv("AGENTPROTO_PARENT_SESSION", "")
	code, _, errOut := hook(t, payload(t, "session-start"), "session-start")
	require.Equal(t, 0, code)
	require.Empty(t, errOut)
	s, err := apiclient.Sessions{C: apiclient.New(node.URL(), node.Token)}.Get(context.Background(), hookSession)
	require.NoError(t, err)
	require.Equal(t, sentinel.SessionRunning, s.Status)
}

// The stdio MCP bridge forwards a tool call to the live node of the list.
func TestMCPBridgeFailsOverToTheNextNode(t *testing.T) {
	node := startAppNode(t)
	t.Setenv("AGENTPROTO_HOME", t.TempDir())
	t.Setenv("AGENTPROTO_URL", "")
	t.Setenv("AGENTPROTO_TOKEN", node.Token)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan int, 1)
	go func() {
		done <- cli.Main(ctx, []string{"mcp", "--session", "s1", "--url", goneURL(t) + "," + node.URL()}, cli.IO{In: inR, Out: outW, ErrOut: io.Discard})
		_ = outW.Close()
	}()
	lines := bufio.NewScanner(outR)
	lines.Buffer(make([]byte, 1<<20), 1<<20)
	call := func(msg string) map[string]any {
		_, err := io.WriteString(inW, msg+"\n")
		require.NoError(t, err)
		require.True(t, lines.Scan(), "an answer")
		var resp map[string]any
		require.NoError(t, json.Unmarshal(lines.Bytes(), &resp))
		return resp
	}
	call(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	_, err := io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	require.NoError(t, err)
	resp := call(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sentinel_list","arguments":{}}}`)
	raw, err := json.Marshal(resp["result"])
	require.NoError(t, err)
	require.NotContains(t, string(raw), `"isError":true`, string(raw))
	require.True(t, strings.Contains(string(raw), `"ok":true`), string(raw))
	_ = inW.Close()
	select {
	case code := <-done:
		require.Equal(t, 0, code)
	case <-ctx.Done():
		t.Fatal("the bridge did not stop at the end of stdin")
	}
}
