package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentproto/sentinel/runtime/app"
)

// node is a sentinel node the harness started: in-process (app set) or a
// child process running the binary (cmd set).
type node struct {
	home  string
	fsync bool
	url   string
	token string
	http  *http.Client

	app *app.App

	bin  string
	cmd  *exec.Cmd
	logs *tailBuffer
	done chan error
}

// startInProcess builds and starts a node with runtime/app on home, with
// partitions event partitions (0: the default).
func startInProcess(ctx context.Context, home string, fsync bool, partitions int) (*node, error) {
	cfg := app.DefaultConfig()
	cfg.Home = home
	cfg.Listen = "127.0.0.1:0"
	cfg.NATS.SyncAlways = fsync
	cfg.Testing.FakeProvider = true
	cfg.Sentinel.AutoWatchPRs = false
	if partitions != 0 {
		// Out of range, the node's config check refuses it by name.
		cfg.Bus.Partitions = partitions
	}
	log := slog.New(slog.DiscardHandler)
	a, err := app.New(cfg, log)
	if err != nil {
		return nil, err
	}
	if err := a.Start(ctx); err != nil {
		_ = a.Stop(context.Background())
		return nil, err
	}
	return &node{home: home, fsync: fsync, url: a.URL(), token: a.Token, app: a, http: newHTTPClient(64)}, nil
}

// startBinary runs `<bin> serve` on home and waits until /readyz answers
// 200 (or ctx ends). The node runs with the fake provider and the given
// fsync setting, then extraEnv (KEY=value, later wins); the rest of its
// configuration is the defaults. It logs warnings and errors only, unless
// extraEnv sets AGENTPROTO_LOG_LEVEL.
func startBinary(ctx context.Context, bin, home string, fsync bool, extraEnv ...string) (*node, error) {
	_ = os.Remove(filepath.Join(home, app.DaemonFile))
	level := "warn"
	for _, kv := range extraEnv {
		if v, ok := strings.CutPrefix(kv, "AGENTPROTO_LOG_LEVEL="); ok {
			level = v
		}
	}
	cmd := exec.Command(bin, "serve", "--listen", "127.0.0.1:0", "--log-level", level)
	cmd.Env = append(append(os.Environ(), "AGENTPROTO_HOME="+home, "AGENTPROTO_TESTING_FAKE_PROVIDER=true",
		"AGENTPROTO_NATS_SYNC_ALWAYS="+strconv.FormatBool(fsync), "AGENTPROTO_SENTINEL_AUTO_WATCH_PRS=false"), extraEnv...)
	logs := &tailBuffer{max: 16 << 10}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s serve: %w", bin, err)
	}
	n := &node{home: home, fsync: fsync, bin: bin, cmd: cmd, logs: logs, done: make(chan error, 1), http: newHTTPClient(64)}
	go func() { n.done <- cmd.Wait() }()
	for {
		select {
		case err := <-n.done:
			n.done <- err
			return nil, fmt.Errorf("sentinel serve exited early (%v): %s", err, logs.String())
		case <-ctx.Done():
			n.kill()
			return nil, ctx.Err()
		default:
		}
		if n.url == "" {
			if raw, err := os.ReadFile(filepath.Join(home, app.DaemonFile)); err == nil {
				var info app.DaemonInfo
				if json.Unmarshal(raw, &info) == nil && info.URL != "" && info.PID == cmd.Process.Pid {
					n.url = info.URL
				}
			}
		}
		if n.url != "" {
			if resp, err := n.http.Get(n.url + "/readyz"); err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					break
				}
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	tok, err := os.ReadFile(filepath.Join(home, app.TokenFile))
	if err != nil {
		n.kill()
		return nil, fmt.Errorf("read the node token: %w", err)
	}
	n.token = strings.TrimSpace(string(tok))
	return n, nil
}

// pid returns the node's process id (0 for an in-process node).
func (n *node) pid() int {
	if n.cmd != nil {
		return n.cmd.Process.Pid
	}
	return 0
}

// stop stops the node cleanly (SIGTERM for a child process).
func (n *node) stop(ctx context.Context) error {
	n.http.CloseIdleConnections()
	if n.app != nil {
		return n.app.Stop(ctx)
	}
	if n.cmd.ProcessState != nil {
		return nil
	}
	_ = n.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-n.done:
		n.done <- err
		return err
	case <-ctx.Done():
		n.kill()
		return ctx.Err()
	}
}

// kill ends a child process at once.
func (n *node) kill() {
	if n.cmd != nil && n.cmd.ProcessState == nil {
		_ = n.cmd.Process.Signal(syscall.SIGKILL)
		select {
		case <-n.done:
		case <-time.After(10 * time.Second):
		}
	}
}

// call sends an API request with the bearer token and decodes a JSON
// answer into out (when non-nil). A status >= 300 is an error carrying the
// body.
func (n *node) call(ctx context.Context, method, path string, body any, out any) (int, error) {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return 0, err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, n.url+path, rd)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+n.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := n.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, err
	}
	if resp.StatusCode >= 300 {
		return resp.StatusCode, fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, bytes.TrimSpace(raw))
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return resp.StatusCode, fmt.Errorf("%s %s: decode: %w", method, path, err)
		}
	}
	return resp.StatusCode, nil
}

// watch creates a fake-provider sentinel on subject for session and
// returns its id and push hook key.
func (n *node) watch(ctx context.Context, subject, session string) (id, hookKey string, err error) {
	var out struct {
		Sentinel struct {
			ID string `json:"id"`
		} `json:"sentinel"`
	}
	req := map[string]any{"subject": subject, "sessionId": session, "provider": "fake", "types": []string{"*"}, "until": "never"}
	if _, err := n.call(ctx, http.MethodPost, "/sentinels", req, &out); err != nil {
		return "", "", err
	}
	if out.Sentinel.ID == "" {
		return "", "", errors.New("POST /sentinels answered no sentinel id")
	}
	return out.Sentinel.ID, FakeHookKey(out.Sentinel.ID), nil
}

// FakeHookKey is the push hook key the fake provider gives a sentinel
// ("fk-" + the lowercased sentinel id); its ingress path is
// /inbound/sentinel-<key>.
func FakeHookKey(sentinelID string) string { return "fk-" + strings.ToLower(sentinelID) }

func newHTTPClient(conns int) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	tr.MaxIdleConns = conns
	tr.MaxIdleConnsPerHost = conns
	return &http.Client{Transport: tr, Timeout: 2 * time.Minute}
}

// tailBuffer keeps the last max bytes written (a child's logs).
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append([]byte(nil), t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

// js is a JetStream context on the in-process node's own connection.
func (n *node) js() (jetstream.JetStream, error) {
	js, err := jetstream.New(n.app.NATSConn())
	if err != nil {
		return nil, fmt.Errorf("bench: jetstream on the node's connection: %w", err)
	}
	return js, nil
}
