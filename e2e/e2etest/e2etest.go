// Package e2etest builds the sentinel binary and runs `sentinel serve` on
// a temporary home for the end-to-end test packages: one harness, shared.
package e2etest

import (
	"bytes"
	"encoding/json"
	"fmt"
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

// Build compiles the sentinel binary into a fresh temporary folder. Call
// it from TestMain; cleanup removes the folder.
func Build() (bin string, cleanup func(), err error) {
	dir, err := os.MkdirTemp("", "sentinel-e2e-")
	if err != nil {
		return "", nil, err
	}
	bin = filepath.Join(dir, "sentinel")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/agentproto/sentinel/cmd/sentinel")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		_ = os.RemoveAll(dir)
		return "", nil, fmt.Errorf("build sentinel: %w", err)
	}
	return bin, func() { _ = os.RemoveAll(dir) }, nil
}

// Main is the TestMain of an e2e package: it builds the binary into *bin,
// runs the tests and exits with their code (1 when the build fails).
func Main(m *testing.M, bin *string) {
	b, cleanup, err := Build()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	*bin = b
	code := m.Run()
	cleanup()
	os.Exit(code)
}

// CleanEnv is the test process environment without AGENTPROTO_* settings.
func CleanEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AGENTPROTO_") {
			out = append(out, kv)
		}
	}
	return out
}

// SyncBuffer is a bytes.Buffer safe for one writer and concurrent readers.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what was written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Node is a running `sentinel serve`.
type Node struct {
	// Name is the node's name in a cluster ("" alone).
	Name  string
	Home  string
	URL   string
	Token string
	Logs  *SyncBuffer
	Cmd   *exec.Cmd
	// Done is closed when the process has exited; ExitErr then tells how.
	Done chan struct{}

	exitErr error
}

// Start runs `bin serve --listen 127.0.0.1:0` on home with the test-only
// fake provider and env, waits (with a deadline, never a bare sleep) until
// daemon.json names it and /readyz answers 200, and registers a cleanup
// that SIGKILLs it if it still runs.
func Start(t testing.TB, bin, home string, env ...string) *Node {
	t.Helper()
	n := Launch(t, bin, home, "127.0.0.1:0", env...)
	n.WaitReady(t, 30*time.Second)
	return n
}

// Launch runs `bin serve --listen listen` on home with the test-only fake
// provider and env and returns at once (a clustered node is ready only
// once a majority of its peers runs: start them all, then WaitReady). It
// registers a cleanup that SIGKILLs the process if it still runs.
func Launch(t testing.TB, bin, home, listen string, env ...string) *Node {
	t.Helper()
	return LaunchWrapped(t, nil, bin, home, listen, env...)
}

// LaunchWrapped is Launch with the command run under the argv prefix wrap
// (for example `ip netns exec <ns>`); a nil wrap runs bin itself. SIGKILL
// reaches the wrapper's process, so the wrapper must exec bin (as `ip
// netns exec` does).
func LaunchWrapped(t testing.TB, wrap []string, bin, home, listen string, env ...string) *Node {
	t.Helper()
	_ = os.Remove(filepath.Join(home, "daemon.json"))
	n := &Node{Home: home, Logs: &SyncBuffer{}, Done: make(chan struct{})}
	argv := append(append(append([]string(nil), wrap...), bin), "serve", "--listen", listen, "--log-level", "debug")
	n.Cmd = exec.Command(argv[0], argv[1:]...)
	n.Cmd.Env = append(append(CleanEnv(), "AGENTPROTO_HOME="+home, "AGENTPROTO_TESTING_FAKE_PROVIDER=true"), env...)
	n.Cmd.Stdout, n.Cmd.Stderr = n.Logs, n.Logs
	if err := n.Cmd.Start(); err != nil {
		t.Fatalf("start serve: %v", err)
	}
	go func() { n.exitErr = n.Cmd.Wait(); close(n.Done) }()
	t.Cleanup(n.Kill)
	return n
}

// WaitReady waits, up to within, until daemon.json names the node and
// /readyz answers 200, then reads the node's token from its home. It fails
// the test (with the node's logs) when the process exits first or the
// deadline passes.
func (n *Node) WaitReady(t testing.TB, within time.Duration) {
	t.Helper()
	if msg := n.waitReady(within); msg != "" {
		t.Fatalf("%s\n%s", msg, n.Logs.String())
	}
}

// WaitListening waits, up to within, until daemon.json names the node (it
// is written once the listener is bound and serving, /healthz included,
// whether or not the node is ready) and returns its URL. It fails the test
// when the process exits first or the deadline passes.
func (n *Node) WaitListening(t testing.TB, within time.Duration) string {
	t.Helper()
	deadline := time.Now().Add(within)
	for n.URL == "" {
		select {
		case <-n.Done:
			t.Fatalf("serve exited early: %v\n%s", n.exitErr, n.Logs.String())
		default:
		}
		if raw, err := os.ReadFile(filepath.Join(n.Home, "daemon.json")); err == nil {
			var info struct{ URL string }
			if json.Unmarshal(raw, &info) == nil {
				n.URL = info.URL
			}
		}
		if n.URL == "" {
			if time.Now().After(deadline) {
				t.Fatalf("no daemon.json within %s\n%s", within, n.Logs.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return n.URL
}

// waitReady is WaitReady without the test: "" when ready, else why not.
func (n *Node) waitReady(within time.Duration) string {
	deadline := time.Now().Add(within)
	for {
		select {
		case <-n.Done:
			return fmt.Sprintf("serve exited early: %v", n.exitErr)
		default:
		}
		if n.URL == "" {
			if raw, err := os.ReadFile(filepath.Join(n.Home, "daemon.json")); err == nil {
				var info struct{ URL string }
				if json.Unmarshal(raw, &info) == nil {
					n.URL = info.URL
				}
			}
		}
		if n.URL != "" && ready(n.URL) {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Sprintf("node not ready within %s", within)
		}
		time.Sleep(20 * time.Millisecond)
	}
	tok, err := os.ReadFile(filepath.Join(n.Home, "daemon-token"))
	if err != nil {
		return fmt.Sprintf("read token: %v", err)
	}
	n.Token = strings.TrimSpace(string(tok))
	return ""
}

// probe is the client of readiness probes: a node that hangs is not ready.
var probe = &http.Client{Timeout: 2 * time.Second}

func ready(url string) bool {
	resp, err := probe.Get(url + "/readyz")
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// Kill SIGKILLs the node (if it runs) and waits for it to exit.
func (n *Node) Kill() {
	select {
	case <-n.Done:
		return
	default:
	}
	_ = n.Cmd.Process.Signal(syscall.SIGKILL)
	select {
	case <-n.Done:
	case <-time.After(10 * time.Second):
	}
}

// Stop sends SIGTERM and returns how long the exit took and the exit
// error; it gives up after within.
func (n *Node) Stop(within time.Duration) (time.Duration, error) {
	start := time.Now()
	_ = n.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-n.Done:
		return time.Since(start), n.exitErr
	case <-time.After(within):
		return time.Since(start), fmt.Errorf("did not exit within %s", within)
	}
}

// ExitErr is the process's exit error, once Done is closed.
func (n *Node) ExitErr() error { return n.exitErr }
