package sentinels_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus"
	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/github"
	"github.com/agentproto/sentinel/providers/github/githubtest"
	"github.com/agentproto/sentinel/providers/githubapp"
	"github.com/agentproto/sentinel/runtime/runtimetest"
	"github.com/agentproto/sentinel/runtime/sentinels"
)

// appRepo is the repository of testdata/githubapp_pull_request.json.
const (
	appRepo   = "Codertocat/Hello-World"
	appSecret = "app-hook-secret-for-the-runtime-test"
)

// lateKV is a providers.KV whose bucket is known once the runtime started
// (the provider is registered before).
type lateKV struct {
	mu sync.Mutex
	kv providers.KV
}

func (l *lateKV) get() providers.KV   { l.mu.Lock(); defer l.mu.Unlock(); return l.kv }
func (l *lateKV) set(kv providers.KV) { l.mu.Lock(); l.kv = kv; l.mu.Unlock() }
func (l *lateKV) Get(ctx context.Context, k string) ([]byte, uint64, error) {
	return l.get().Get(ctx, k)
}
func (l *lateKV) Create(ctx context.Context, k string, v []byte) (uint64, error) {
	return l.get().Create(ctx, k, v)
}
func (l *lateKV) Update(ctx context.Context, k string, v []byte, rev uint64) (uint64, error) {
	return l.get().Update(ctx, k, v, rev)
}
func (l *lateKV) Put(ctx context.Context, k string, v []byte) (uint64, error) {
	return l.get().Put(ctx, k, v)
}
func (l *lateKV) Delete(ctx context.Context, k string) error { return l.get().Delete(ctx, k) }
func (l *lateKV) Keys(ctx context.Context) ([]string, error) { return l.get().Keys(ctx) }

type mapCreds map[string]string

func (m mapCreds) Credentials(context.Context, string) (map[string]string, error) {
	out := map[string]string{}
	for k, v := range m {
		out[k] = v
	}
	return out, nil
}

// appEnv is a runtime with the real github-app provider against the fake
// GitHub (installed on appRepo and acme/widgets), beside shaped agentpush
// (not ready), webhook (needs a public URL) and local-gh.
func appEnv(t *testing.T) (*runtimetest.Env, *githubtest.Server) {
	t.Helper()
	key := appTestKey(t)
	path := writeAppKey(t, key)
	gh := githubtest.New(t, githubtest.Options{})
	gh.SetApp(77, "sentinel", &key.PublicKey)
	gh.Install("Codertocat", appRepo, "acme/widgets")
	store := &lateKV{}
	app, err := githubapp.New(githubapp.Config{Creds: mapCreds{githubapp.FieldAppID: "77", githubapp.FieldPrivateKeyFile: path, githubapp.FieldWebhookSecret: appSecret},
		Store: store, HTTP: gh.HTTPClient(), Now: gh.Now})
	require.NoError(t, err)
	ap, wh, lg := newShaped("agentpush"), newShaped("webhook"), newShaped("local-gh")
	ap.SetNotReady("no key")
	wh.needsURL = true
	lg.subjects = []string{"github"}
	e := runtimetest.Start(t, runtimetest.Options{NoWorkers: true, Extra: []providers.Provider{lg, wh, app, ap}})
	store.set(bus.NewKV(e.Buckets.Hooks))
	return e, gh
}

func TestAutoSelectionPrefersTheAppWhereItIsInstalled(t *testing.T) {
	e, _ := appEnv(t)
	ctx := context.Background()
	rec, err := e.Service.Create(ctx, sentinel.WatchRequest{SessionID: "s1", PRURL: "https://github.com/acme/widgets/pull/7"}, "")
	require.NoError(t, err)
	require.Equal(t, githubapp.Slug, rec.Provider)
	require.Empty(t, rec.Warnings)

	rec, err = e.Service.Create(ctx, sentinel.WatchRequest{SessionID: "s1", PRURL: "https://github.com/acme/elsewhere/pull/7"}, "")
	require.NoError(t, err)
	require.Equal(t, "local-gh", rec.Provider, "outside the installation: the next in the order")

	_, err = e.Service.Create(ctx, sentinel.WatchRequest{SessionID: "s1", PRURL: "https://github.com/acme/elsewhere/pull/8", Provider: githubapp.Slug}, "")
	require.Equal(t, sentinel.CodeProviderCreateFail, codeOf(t, err), "an explicit choice is never second-guessed")
	require.Contains(t, err.Error(), "install the App on that repository")

	rec, err = e.Service.Create(ctx, sentinel.WatchRequest{SessionID: "s1", PRURL: "https://github.com/acme/widgets/pull/9", Provider: "local-gh"}, "")
	require.NoError(t, err)
	require.Equal(t, "local-gh", rec.Provider)
}

func TestAppRouteDeliversOnlyToConcernedSentinels(t *testing.T) {
	e, _ := appEnv(t)
	ctx := context.Background()
	ok, err := e.Service.KnownHook(ctx, githubapp.RouteKey)
	require.NoError(t, err)
	require.True(t, ok, "the App's route exists before any sentinel")

	on, err := e.Service.Create(ctx, sentinel.WatchRequest{SessionID: "s1", Subject: "github:" + appRepo + "#2"}, "")
	require.NoError(t, err)
	require.Equal(t, githubapp.Slug, on.Provider)
	off, err := e.Service.Create(ctx, sentinel.WatchRequest{SessionID: "s2", Subject: "github:acme/widgets#2"}, "")
	require.NoError(t, err)
	require.Equal(t, githubapp.Slug, off.Provider)

	body, err := os.ReadFile(filepath.Join("testdata", "githubapp_pull_request.json"))
	require.NoError(t, err)
	res, err := e.Service.Inbound(ctx, appDelivery("pull_request", body))
	require.NoError(t, err)
	require.Equal(t, 1, res.Sentinels, "only the sentinel on the delivery's repository")
	require.Positive(t, res.Delivered)

	// An installation change reaches the provider with no sentinel bound.
	change := []byte(`{"action":"added","installation":{"id":5},"repositories_added":[{"full_name":"acme/new"}],"repositories_removed":[]}`)
	res, err = e.Service.Inbound(ctx, appDelivery("installation_repositories", change))
	require.NoError(t, err)
	require.True(t, res.Ignored)
	rec, err := e.Service.Create(ctx, sentinel.WatchRequest{SessionID: "s3", Subject: "github:acme/new#1"}, "")
	require.NoError(t, err)
	require.Equal(t, githubapp.Slug, rec.Provider, "the added repository is covered at once")

	bad := appDelivery("pull_request", body)
	bad.Header.Set(github.WebhookSignatureHeader, github.SignWebhook("wrong", body))
	_, err = e.Service.Inbound(ctx, bad)
	var ie *providers.InboundError
	require.ErrorAs(t, err, &ie)
	require.Equal(t, http.StatusUnauthorized, ie.Status)
}

func appDelivery(event string, body []byte) providers.Inbound {
	h := http.Header{}
	h.Set("X-GitHub-Event", event)
	h.Set("X-GitHub-Delivery", "8e4b1a6e-cc78-11e3-81ab-4c9367dc0958")
	h.Set(github.WebhookSignatureHeader, github.SignWebhook(appSecret, body))
	return providers.Inbound{HookKey: githubapp.RouteKey, Body: body, Header: h}
}

var (
	appKeyOnce sync.Once
	appKeyVal  *rsa.PrivateKey
)

// appTestKey is one RSA key for the package's App tests.
func appTestKey(t *testing.T) *rsa.PrivateKey {
	t.Helper()
	appKeyOnce.Do(func() {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
		appKeyVal = k
	})
	return appKeyVal
}

// writeAppKey writes the key as GitHub hands it out, mode 0600.
func writeAppKey(t *testing.T, key *rsa.PrivateKey) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "app.pem")
	require.NoError(t, os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), 0o600))
	return path
}

// A provider's listing shows the budgets its calls spend (asked without
// a handle); a sentinel's status shows those its own polls spend (asked
// with its handle: a local-gh sentinel on a repository the GitHub App
// covers spends the installation's budget, not the token's).
func TestListingsAndStatusShowTheQuotaOfTheProvidersCredentials(t *testing.T) {
	budget := map[string]any{"credential": "token", "resource": "core", "limit": 5000, "remaining": 4990}
	installation := map[string]any{"credential": "installation:7", "resource": "core", "limit": 5000, "remaining": 4000}
	var asked []string
	e := runtimetest.Start(t, runtimetest.Options{NoWorkers: true, Service: []sentinels.Option{sentinels.WithQuota(func(provider string, h *sentinel.Handle) []map[string]any {
		if provider != "fake" {
			return nil
		}
		if h == nil {
			return []map[string]any{budget}
		}
		asked = append(asked, h.RemoteID)
		return []map[string]any{installation}
	})}})
	var seen bool
	for _, a := range e.Service.Adapters(context.Background()) {
		if a.Slug == "fake" {
			require.Equal(t, []map[string]any{budget}, a.Info["quota"])
			seen = true
		}
	}
	require.True(t, seen)
	rec := e.Watch(req("fake"))
	st, err := e.Service.Status(context.Background(), rec.ID)
	require.NoError(t, err)
	require.Equal(t, []map[string]any{installation}, st.Extra["quota"])
	require.Equal(t, []string{rec.Handle.RemoteID}, asked, "the status asked with the sentinel's own handle")
}

// lateCreds is the credential store of the runtime, known once it started.
type lateCreds struct {
	mu sync.Mutex
	cs providers.CredentialSource
}

func (l *lateCreds) Credentials(ctx context.Context, slug string) (map[string]string, error) {
	l.mu.Lock()
	cs := l.cs
	l.mu.Unlock()
	return cs.Credentials(ctx, slug)
}

func TestSetupOfTheAppThroughTheService(t *testing.T) {
	key := appTestKey(t)
	gh := githubtest.New(t, githubtest.Options{})
	gh.SetApp(77, "sentinel", &key.PublicKey)
	gh.Install("acme", "acme/widgets")
	store, creds := &lateKV{}, &lateCreds{}
	app, err := githubapp.New(githubapp.Config{Creds: creds, Store: store, HTTP: gh.HTTPClient(), Now: gh.Now})
	require.NoError(t, err)
	e := runtimetest.Start(t, runtimetest.Options{NoWorkers: true, Extra: []providers.Provider{app}})
	store.set(bus.NewKV(e.Buckets.Hooks))
	creds.mu.Lock()
	creds.cs = e.Creds
	creds.mu.Unlock()
	ctx := context.Background()

	loose := filepath.Join(t.TempDir(), "loose.pem")
	require.NoError(t, os.WriteFile(loose, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), 0o644))
	_, err = e.Service.Setup(ctx, githubapp.Slug, map[string]string{githubapp.FieldAppID: "77", githubapp.FieldPrivateKeyFile: loose, githubapp.FieldWebhookSecret: appSecret})
	require.Equal(t, sentinel.CodeInvalidSetup, codeOf(t, err))
	require.Contains(t, err.Error(), "chmod 600")
	got, err := e.Creds.Credentials(ctx, githubapp.Slug)
	require.NoError(t, err)
	require.Empty(t, got, "a refused setup stores nothing")

	res, err := e.Service.Setup(ctx, githubapp.Slug, map[string]string{githubapp.FieldAppID: "77", githubapp.FieldPrivateKeyFile: writeAppKey(t, key), githubapp.FieldWebhookSecret: appSecret})
	require.NoError(t, err)
	require.True(t, res.Readiness.Ready, res.Readiness.Reason)
	require.NotContains(t, fmt.Sprint(res), appSecret, "the secret is never echoed")

	rec, err := e.Service.Create(ctx, sentinel.WatchRequest{SessionID: "s1", PRURL: "https://github.com/acme/widgets/pull/1"}, "")
	require.NoError(t, err)
	require.Equal(t, githubapp.Slug, rec.Provider, "set up and installed: auto-selected")
}
