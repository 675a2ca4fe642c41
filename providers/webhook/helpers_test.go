package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus"
	"github.com/agentproto/sentinel/bus/bustest"
	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/github"
	"github.com/agentproto/sentinel/providers/github/githubtest"
)

const testRepo = "acme/widgets"

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// harness is the real gh against the fake GitHub, and the real embedded
// JetStream for the hook store and the locks.
type harness struct {
	t      *testing.T
	gh     *githubtest.Server
	bus    *bustest.Env
	runner *github.Runner
	logs   *syncBuffer

	mu      sync.Mutex
	url     string
	secrets map[string]bool
	// allowHTTP is the providers' Config.AllowHTTP.
	allowHTTP bool
	texts     []string
}

func newHarness(t *testing.T, opts githubtest.Options) *harness {
	t.Helper()
	if _, err := exec.LookPath("gh"); err != nil {
		t.Skip("gh (GitHub CLI) is not on PATH; install it (apt-get install -y gh) to run this test")
	}
	h := &harness{t: t, gh: githubtest.New(t, opts), bus: bustest.Start(t), logs: &syncBuffer{},
		url: "https://sentinel.example.test", secrets: map[string]bool{}}
	h.gh.AddRepo(testRepo)
	h.runner = github.NewRunner(github.Config{Env: h.gh.Env(h.gh.Token())})
	t.Cleanup(h.checkSecrets)
	return h
}

// provider returns a provider instance; node names its locker owner, so
// two nodes share the bucket but not an in-process mutex.
func (h *harness) provider(node string) *Provider {
	return h.providerWith(node, h.runner)
}

func (h *harness) providerWith(node string, r Runner) *Provider {
	h.t.Helper()
	p, err := New(Config{
		Runner:    r,
		Store:     bus.NewKV(h.hooks()),
		Locker:    h.bus.Bus.NewLocker(node),
		PublicURL: h.publicURL,
		Now:       h.gh.Now,
		AllowHTTP: h.allowHTTP,
		Log:       slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug})).With("node", node),
	})
	require.NoError(h.t, err)
	return p
}

func (h *harness) publicURL() providers.PublicURL {
	h.mu.Lock()
	defer h.mu.Unlock()
	return providers.PublicURL{URL: h.url, Stable: h.url != "", Source: "test"}
}

func (h *harness) setURL(u string) { h.mu.Lock(); h.url = u; h.mu.Unlock() }

// record reads the repository's hook record and remembers its secret.
func (h *harness) record(repo string) *hookRecord {
	h.t.Helper()
	rec, _, err := store{kv: bus.NewKV(h.hooks())}.load(context.Background(), repo)
	require.NoError(h.t, err)
	if rec != nil {
		h.noteSecret(rec.Secret)
	}
	return rec
}

func (h *harness) noteSecret(s string) {
	h.mu.Lock()
	h.secrets[s] = true
	h.mu.Unlock()
}

// seen remembers text (a handle, an error, a status) that must not carry a
// secret.
func (h *harness) seen(v any) {
	var s string
	switch x := v.(type) {
	case error:
		if x == nil {
			return
		}
		s = x.Error()
	case string:
		s = x
	default:
		b, err := json.Marshal(x)
		require.NoError(h.t, err)
		s = string(b)
	}
	h.mu.Lock()
	h.texts = append(h.texts, s)
	h.mu.Unlock()
}

// checkSecrets fails the test when any secret seen in a record or on the
// fake appears in a log line, a handle, an error or a status.
func (h *harness) checkSecrets() {
	for _, hk := range h.gh.Hooks(testRepo) {
		h.noteSecret(hk.Secret)
	}
	logs := h.logs.String()
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.secrets {
		if s == "" {
			continue
		}
		require.NotContains(h.t, logs, s, "a secret was logged")
		for _, txt := range h.texts {
			require.NotContains(h.t, txt, s, "a secret leaked into a handle, error or status")
		}
	}
}

func spec(subjects ...string) sentinel.Spec {
	s := sentinel.Spec{Until: sentinel.Until{Kind: sentinel.UntilNever}, Target: sentinel.Target{Kind: sentinel.TargetSession, SessionID: "s1"}}
	for _, sub := range subjects {
		s.Match = append(s.Match, sentinel.Clause{Subject: sub})
	}
	return s
}

func (h *harness) create(p *Provider, subjects ...string) sentinel.Handle {
	h.t.Helper()
	hd, err := p.Create(context.Background(), providers.CreateRequest{SentinelID: sentinel.NewSentinelID(), Spec: spec(subjects...), Delivery: providers.Delivery{Mode: providers.ModePush}})
	h.seen(err)
	require.NoError(h.t, err)
	h.seen(hd)
	return hd
}

// liveHook returns the repository's only hook on the fake.
func (h *harness) liveHook(repo string) githubtest.Hook {
	h.t.Helper()
	hooks := h.gh.Hooks(repo)
	require.Len(h.t, hooks, 1)
	h.noteSecret(hooks[0].Secret)
	return hooks[0]
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

// hooks is the bucket of the hook records (the node keeps them in
// runtime/sentinels' hooks bucket; a provider sees only a KV).
func (h *harness) hooks() jetstream.KeyValue {
	h.t.Helper()
	return h.bus.KeyValue(h.t, jetstream.KeyValueConfig{Bucket: "test_hooks"})
}
