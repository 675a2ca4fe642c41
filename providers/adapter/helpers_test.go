package adapter_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/adapter"
	"github.com/agentproto/sentinel/providers/adapter/adaptertest"
)

// feedBin is the feed adapter, built once for the package's tests.
var feedBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "adapter-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	feedBin, err = adaptertest.BuildTo(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// testToken is the feed's stored token; the adapter writes it to stderr on
// every poll, so the log must never show it.
const testToken = "tok-s3cret-value-1234"

// nodeSecret is a secret of the node's environment no adapter may see.
const nodeSecret = "node-api-token-do-not-leak"

// memCreds is an in-memory credential store.
type memCreds struct {
	mu sync.Mutex
	m  map[string]map[string]string
}

func (c *memCreds) Credentials(_ context.Context, slug string) (map[string]string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]string{}
	for k, v := range c.m[slug] {
		out[k] = v
	}
	return out, nil
}

// logBuf is a log sink safe for concurrent writes.
type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) { l.mu.Lock(); defer l.mu.Unlock(); return l.b.Write(p) }
func (l *logBuf) String() string              { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

// clock is a settable clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time          { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// fixture is one feed adapter under test.
type fixture struct {
	P     *adapter.Provider
	Feed  string
	Log   *logBuf
	Clock *clock
	Creds *memCreds
}

// testConfig is the adapter config of the tests: generous call bounds (a
// loaded machine answers slowly), restarts after 1 s of the fake clock.
func testConfig() adapter.Config {
	c := adapter.DefaultConfig()
	c.RestartMin, c.RestartMax = time.Second, 4*time.Second
	return c
}

// newFeed installs the feed adapter as slug in mode and returns its
// provider; cfg nil is testConfig.
func newFeed(t *testing.T, slug, mode string, cfg *adapter.Config, pub string) *fixture {
	t.Helper()
	c := testConfig()
	if cfg != nil {
		c = *cfg
	}
	dir := t.TempDir()
	path := adaptertest.Install(t, feedBin, dir, slug)
	prefix := adapter.EnvPrefix(slug)
	f := &fixture{Feed: filepath.Join(dir, "feed.jsonl"), Log: &logBuf{}, Clock: &clock{t: time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)},
		Creds: &memCreds{m: map[string]map[string]string{slug: {"token": testToken}}}}
	env := []string{"PATH=" + os.Getenv("PATH"), prefix + "FEED=" + f.Feed, prefix + "MODE=" + mode, "AGENTPROTO_TOKEN=" + nodeSecret}
	f.P = adapter.New(adapter.Found{Slug: slug, Path: path}, c, adapter.Deps{
		Log: slog.New(slog.NewTextHandler(f.Log, &slog.HandlerOptions{Level: slog.LevelDebug})), Creds: f.Creds, Now: f.Clock.Now, Environ: env,
		PublicURL: func() providers.PublicURL { return providers.PublicURL{URL: pub, Stable: pub != ""} },
	})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		f.P.Process().Stop(ctx, time.Second)
		if strings.Contains(f.Log.String(), testToken) {
			t.Errorf("the log shows the adapter's token:\n%s", f.Log.String())
		}
	})
	return f
}
