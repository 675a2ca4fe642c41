// Package node_test drives the built sentinel binary end to end: serve on a
// temporary home and a free port, restarts, SIGTERM and SIGKILL.
package node_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "sentinel-e2e-")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "sentinel")
	build := exec.Command("go", "build", "-o", binary, "github.com/agentproto/sentinel/cmd/sentinel")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build sentinel:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// node is a running `sentinel serve` process.
type node struct {
	t     *testing.T
	home  string
	cmd   *exec.Cmd
	url   string
	token string
	logs  *syncBuffer
	done  chan error
}

// startNode starts `sentinel serve --listen 127.0.0.1:0` on home and waits
// for /readyz.
func startNode(t *testing.T, home string, env ...string) *node {
	t.Helper()
	_ = os.Remove(filepath.Join(home, "daemon.json"))
	cmd := exec.Command(binary, "serve", "--listen", "127.0.0.1:0", "--log-level", "debug")
	cmd.Env = append(os.Environ(), "AGENTPROTO_HOME="+home, "AGENTPROTO_TESTING_FAKE_PROVIDER=true")
	cmd.Env = append(cmd.Env, env...)
	logs := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("start serve: %v", err)
	}
	n := &node{t: t, home: home, cmd: cmd, logs: logs, done: make(chan error, 1)}
	go func() { n.done <- cmd.Wait() }()
	t.Cleanup(func() { n.kill() })
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case err := <-n.done:
			n.done <- err
			t.Fatalf("serve exited early: %v\n%s", err, logs.String())
		default:
		}
		if raw, err := os.ReadFile(filepath.Join(home, "daemon.json")); err == nil {
			var info struct{ URL string }
			if json.Unmarshal(raw, &info) == nil && info.URL != "" {
				n.url = info.URL
				if resp, err := http.Get(n.url + "/readyz"); err == nil {
					resp.Body.Close()
					if resp.StatusCode == 200 {
						break
					}
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("node not ready in time\n%s", logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	tok, err := os.ReadFile(filepath.Join(home, "daemon-token"))
	if err != nil {
		t.Fatalf("read token: %v", err)
	}
	n.token = strings.TrimSpace(string(tok))
	return n
}

func (n *node) kill() {
	if n.cmd.ProcessState == nil {
		_ = n.cmd.Process.Signal(syscall.SIGKILL)
		select {
		case err := <-n.done:
			n.done <- err
		case <-time.After(10 * time.Second):
		}
	}
}

// stop sends SIGTERM and returns the exit error and how long it took.
func (n *node) stop() (error, time.Duration) {
	start := time.Now()
	_ = n.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-n.done:
		n.done <- err
		return err, time.Since(start)
	case <-time.After(30 * time.Second):
		return errors.New("did not exit within 30s"), time.Since(start)
	}
}

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

// syncBuffer is a bytes.Buffer safe for one writer and concurrent readers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
