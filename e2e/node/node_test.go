// Package node_test drives the built sentinel binary end to end: serve on a
// temporary home and a free port, restarts, SIGTERM and SIGKILL, push
// ingress and metrics.
package node_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentproto/sentinel/e2e/e2etest"
)

var binary string

func TestMain(m *testing.M) {
	e2etest.Main(m, &binary)
}

// node is a running `sentinel serve` process with request helpers.
type node struct {
	*e2etest.Node
	t     *testing.T
	home  string
	url   string
	token string
	logs  *e2etest.SyncBuffer
}

// startNode starts `sentinel serve --listen 127.0.0.1:0` on home (with the
// fake provider) and waits for /readyz.
func startNode(t *testing.T, home string, env ...string) *node {
	t.Helper()
	n := e2etest.Start(t, binary, home, env...)
	return &node{Node: n, t: t, home: home, url: n.URL, token: n.Token, logs: n.Logs}
}

func (n *node) kill() { n.Kill() }

// stop sends SIGTERM and returns how long the exit took and the exit error.
func (n *node) stop() (time.Duration, error) { return n.Stop(30 * time.Second) }

type answer struct {
	status int
	body   map[string]any
	raw    string
}

func (n *node) do(method, path string, body any, token string) answer {
	n.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		raw, _ := json.Marshal(b)
		rd = bytes.NewReader(raw)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, method, n.url+path, rd)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		n.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	a := answer{status: resp.StatusCode, raw: string(raw)}
	_ = json.Unmarshal(raw, &a.body)
	return a
}
