// Package e2e drives the built sentinel binary through its surfaces: the
// CLI verbs and the MCP tools over stdio and streamable HTTP, with the
// official MCP Go SDK as an independent client.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/agentproto/sentinel/e2e/e2etest"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// binary is the sentinel binary built once for the package.
var binary string

func TestMain(m *testing.M) {
	e2etest.Main(m, &binary)
}

// surfaceNode is a running `sentinel serve` on a temporary home with the
// fake provider fed from feed.
type surfaceNode struct {
	*e2etest.Node
	t     *testing.T
	home  string
	feed  string
	url   string
	token string
	mu    sync.Mutex
	seq   int
}

// startSurfaceNode starts a node and waits for /readyz (with a deadline).
// At cleanup it is stopped with SIGTERM and its logs shown on failure.
func startSurfaceNode(t *testing.T) *surfaceNode {
	t.Helper()
	home := t.TempDir()
	feed := filepath.Join(home, "feed.jsonl")
	n := e2etest.Start(t, binary, home, "AGENTPROTO_TESTING_FAKE_FEED="+feed)
	t.Cleanup(func() {
		_, _ = n.Stop(15 * time.Second)
		if t.Failed() {
			t.Logf("node logs:\n%s", n.Logs.String())
		}
	})
	return &surfaceNode{Node: n, t: t, home: home, feed: feed, url: n.URL, token: n.Token}
}

// cleanEnv is the test process environment without AGENTPROTO_* settings.
func cleanEnv() []string { return e2etest.CleanEnv() }

// env is the environment of a client process of this node.
func (n *surfaceNode) env(extra ...string) []string {
	return append(append(cleanEnv(), "AGENTPROTO_HOME="+n.home), extra...)
}

// emit appends one fake event for subject to the feed and returns its id.
func (n *surfaceNode) emit(subject, typ string) string {
	n.t.Helper()
	return n.emitEvent(subject, typ, false)
}

// emitTerminal appends one terminal fake event (a close) and returns its id.
func (n *surfaceNode) emitTerminal(subject, typ string) string {
	n.t.Helper()
	return n.emitEvent(subject, typ, true)
}

// emitSelf appends one fake event caused by the provider's own identity
// (selfcaused) and returns its id.
func (n *surfaceNode) emitSelf(subject, typ string, terminal bool) string {
	n.t.Helper()
	return n.emitEvent(subject, typ, terminal, "selfcaused", true)
}

func (n *surfaceNode) emitEvent(subject, typ string, terminal bool, extra ...any) string {
	n.t.Helper()
	n.mu.Lock()
	defer n.mu.Unlock()
	n.seq++
	id := fmt.Sprintf("evt_surface_%d", n.seq)
	parts := strings.SplitN(subject, "#", 2)
	subjects := []string{subject}
	if len(parts) == 2 {
		subjects = append(subjects, parts[0])
	}
	ev := map[string]any{
		"specversion": "1.0", "id": id, "source": "//agentproto.local/sentinel/fake", "type": typ,
		"subject": subject, "time": time.Now().UTC().Format(time.RFC3339), "datacontenttype": "application/json",
		"data": map[string]any{"n": n.seq}, "summary": "surface test event " + id, "subjects": subjects, "terminal": terminal,
	}
	for i := 0; i+1 < len(extra); i += 2 {
		ev[extra[i].(string)] = extra[i+1]
	}
	raw, err := json.Marshal(ev)
	require.NoError(n.t, err)
	f, err := os.OpenFile(n.feed, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	require.NoError(n.t, err)
	_, err = f.Write(append(raw, '\n'))
	require.NoError(n.t, err)
	require.NoError(n.t, f.Close())
	return id
}

// api sends one authenticated REST request and decodes the JSON answer.
func (n *surfaceNode) api(method, path string, body any) (int, map[string]any) {
	n.t.Helper()
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		require.NoError(n.t, err)
		rd = bytes.NewReader(raw)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, n.url+path, rd)
	require.NoError(n.t, err)
	req.Header.Set("Authorization", "Bearer "+n.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(n.t, err)
	defer resp.Body.Close()
	var out map[string]any
	raw, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(raw, &out)
	return resp.StatusCode, out
}

// cliResult is one CLI run.
type cliResult struct {
	Code   int
	Stdout string
	Stderr string
}

// JSON decodes stdout.
func (r cliResult) JSON(t *testing.T) map[string]any {
	t.Helper()
	var out map[string]any
	require.NoErrorf(t, json.Unmarshal([]byte(r.Stdout), &out), "stdout is not JSON: %q (stderr %q)", r.Stdout, r.Stderr)
	return out
}

// runCLI runs the binary with args against this node (env: its home).
func (n *surfaceNode) runCLI(stdin string, args ...string) cliResult {
	n.t.Helper()
	return runBinary(n.t, n.env(), stdin, args...)
}

// runBinary runs the binary with env and args, bounded to 60 s.
func runBinary(t *testing.T, env []string, stdin string, args ...string) cliResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = env
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if err != nil {
		ee, isExit := err.(*exec.ExitError)
		require.Truef(t, isExit, "run %v: %v", args, err)
		code = ee.ExitCode()
	}
	return cliResult{Code: code, Stdout: out.String(), Stderr: errOut.String()}
}

// dig walks a decoded JSON value by keys and indexes.
func dig(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			a, _ := v.([]any)
			if k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}
