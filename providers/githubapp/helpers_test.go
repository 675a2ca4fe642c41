package githubapp_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"path/filepath"
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
	"github.com/agentproto/sentinel/providers/githubapp"
)

// The fixtures' repository (testdata/pull_request_closed.json) and App.
const (
	fixtureRepo = "Codertocat/Hello-World"
	testAppID   = 4242
	testSecret  = "app-webhook-secret-0123456789"
)

var (
	keyOnce sync.Once
	testKey *rsa.PrivateKey
)

// appKey is one RSA key for the package's tests (generating one per test
// would dominate their time under -race).
func appKey(t *testing.T) *rsa.PrivateKey {
	t.Helper()
	keyOnce.Do(func() {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
		testKey = k
	})
	return testKey
}

// writeKey writes the key as GitHub hands it out (PKCS#1 PEM) with mode.
func writeKey(t *testing.T, key *rsa.PrivateKey, mode os.FileMode) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "app.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	require.NoError(t, os.WriteFile(path, pemBytes, mode))
	require.NoError(t, os.Chmod(path, mode))
	return path
}

// creds is a providers.CredentialSource over a map, as the node's
// credential store hands out setup fields.
type creds struct {
	mu     sync.Mutex
	fields map[string]string
}

func (c *creds) Credentials(context.Context, string) (map[string]string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.fields), nil
}

func (c *creds) set(k, v string) { c.mu.Lock(); c.fields[k] = v; c.mu.Unlock() }

// syncBuffer is a log sink safe for concurrent writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}
func (b *syncBuffer) String() string { b.mu.Lock(); defer b.mu.Unlock(); return b.buf.String() }

// harness is the fake GitHub with the App registered, a real embedded
// JetStream for the provider's store, and the App's setup.
type harness struct {
	t       *testing.T
	gh      *githubtest.Server
	bus     *bustest.Env
	creds   *creds
	keyFile string
	logs    *syncBuffer
	samples *samples
	inst    int64
	// hold, when set, is the providers' Config.Hold.
	hold github.HoldFunc
	// preset is the providers' Config.Preset.
	preset githubapp.Preset
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	h := &harness{t: t, gh: githubtest.New(t, githubtest.Options{}), bus: bustest.Start(t), logs: &syncBuffer{}, samples: &samples{}}
	h.gh.SetApp(testAppID, "sentinel-test", &appKey(t).PublicKey)
	h.inst = h.gh.Install("Codertocat", fixtureRepo)
	h.keyFile = writeKey(t, appKey(t), 0o600)
	h.creds = &creds{fields: map[string]string{
		githubapp.FieldAppID: "4242", githubapp.FieldPrivateKeyFile: h.keyFile, githubapp.FieldWebhookSecret: testSecret,
	}}
	t.Cleanup(h.checkRedacted)
	return h
}

// provider returns one node's provider over the shared store.
func (h *harness) provider() *githubapp.Provider {
	h.t.Helper()
	p, err := githubapp.New(githubapp.Config{
		Creds: h.creds, Store: bus.NewKV(h.bus.KeyValue(h.t, jetstream.KeyValueConfig{Bucket: "sentinel_hooks", Storage: jetstream.FileStorage})), HTTP: h.gh.HTTPClient(), Now: h.gh.Now,
		Log:     slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Observe: h.samples.add,
		Hold:    h.hold,
		Preset:  h.preset,
	})
	require.NoError(h.t, err)
	return p
}

// checkRedacted fails the test when a token, a JWT or the key reached
// the logs.
func (h *harness) checkRedacted() {
	logs := h.logs.String()
	for _, bad := range []string{"ghs_", "eyJ", "PRIVATE KEY", testSecret} {
		require.NotContains(h.t, logs, bad, "a credential reached the logs")
	}
}

// samples records the rate samples the provider's clients report.
type samples struct {
	mu  sync.Mutex
	all []github.RateSample
}

func (s *samples) add(r github.RateSample) { s.mu.Lock(); s.all = append(s.all, r); s.mu.Unlock() }

func (s *samples) credentials() map[string]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]bool{}
	for _, r := range s.all {
		out[r.Credential] = true
	}
	return out
}

func spec(subjects ...string) sentinel.Spec {
	s := sentinel.Spec{Target: sentinel.Target{SessionID: "ses_test"}}
	for _, sub := range subjects {
		s.Match = append(s.Match, sentinel.Clause{Subject: sub})
	}
	return s
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// delivery is a signed App delivery of a fixture.
func delivery(t *testing.T, event, fixture, secret string) providers.Inbound {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("testdata", fixture))
	require.NoError(t, err)
	hdr := http.Header{}
	hdr.Set("X-GitHub-Event", event)
	hdr.Set("X-GitHub-Delivery", "72d3162e-cc78-11e3-81ab-4c9367dc0958")
	hdr.Set(github.WebhookSignatureHeader, github.SignWebhook(secret, body))
	return providers.Inbound{HookKey: githubapp.RouteKey, Body: body, Header: hdr}
}

var (
	otherOnce sync.Once
	other     *rsa.PrivateKey
)

// otherKey is a second RSA key, one the fake App does not know.
func otherKey(t *testing.T) *rsa.PrivateKey {
	t.Helper()
	otherOnce.Do(func() {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
		other = k
	})
	return other
}
