package webhook

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/bus"
	"github.com/agentproto/sentinel/bus/bustest"
	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/github"
	"github.com/agentproto/sentinel/providers/github/githubtest"
)

// inProcessHarness is the harness with no gh at all: the token comes from
// GH_TOKEN and every call goes through the in-process client (a
// container's setup).
func inProcessHarness(t *testing.T) (*harness, *Provider, *github.Credentials) {
	t.Helper()
	t.Setenv("PATH", t.TempDir()) // gh is nowhere
	h := &harness{t: t, gh: githubtest.New(t, githubtest.Options{}), bus: bustest.Start(t), logs: &syncBuffer{},
		url: "https://sentinel.example.test", secrets: map[string]bool{}}
	h.gh.AddRepo(testRepo)
	t.Cleanup(h.checkSecrets)
	h.noteSecret(h.gh.Token())
	runner := github.NewRunner(github.Config{Env: []string{"GH_TOKEN=" + h.gh.Token()}})
	creds, err := github.ResolveCredentials(runner, "")
	require.NoError(t, err)
	require.True(t, creds.InProcess())
	client, err := github.NewClient(github.ClientConfig{BaseURL: creds.APIBase, Token: creds.Token, HTTP: h.gh.HTTPClient(), Now: h.gh.Now})
	require.NoError(t, err)
	p, err := New(Config{
		Runner: client, Credentials: creds,
		Store: bus.NewKV(h.hooks()), Locker: h.bus.Bus.NewLocker("node-a"), PublicURL: h.publicURL, Now: h.gh.Now,
		Log: slog.New(slog.NewTextHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	require.NoError(t, err)
	return h, p, creds
}

// With GH_TOKEN and no gh installed, webhook is ready (naming GH_TOKEN),
// creates, re-points and deletes the repository hook in-process, and
// never logs the token or the hook secret.
func TestWebhookWithoutGHManagesHooksInProcess(t *testing.T) {
	h, p, _ := inProcessHarness(t)
	ctx := context.Background()

	r := p.Readiness(ctx)
	require.True(t, r.Ready, r.Reason)
	require.Equal(t, github.SourceGHToken, r.CredentialSource)

	a := h.create(p, "github:acme/widgets#1")
	hook := h.liveHook(testRepo)
	require.Equal(t, strconv.FormatInt(hook.ID, 10), a.RemoteID)
	require.Equal(t, h.record(testRepo).Secret, hook.Secret, "the hook got the record's secret in-process")
	require.Equal(t, 1, h.gh.Count(http.MethodPost, "/repos/acme/widgets/hooks"))

	// A new public URL re-points the hook (PATCH) at the next attach.
	h.setURL("https://moved.example.test")
	got, err := p.Attach(ctx, a, providers.Delivery{Mode: providers.ModePush})
	h.seen(err)
	require.NoError(t, err)
	h.seen(got)
	require.Equal(t, "https://moved.example.test/inbound/sentinel-"+h.record(testRepo).Key, h.liveHook(testRepo).URL)

	require.NoError(t, p.Cancel(ctx, a))
	require.Empty(t, h.gh.Hooks(testRepo), "the hook is deleted in-process")
	h.gh.Verify(t)
}

// A token GitHub rejects, or one without the hook scope, names GH_TOKEN
// and the fix, not gh.
func TestWebhookEnvTokenRefusalsNameTheSource(t *testing.T) {
	h, p, _ := inProcessHarness(t)
	ctx := context.Background()

	h.gh.SetScopes("read:org")
	r := p.Readiness(ctx)
	require.False(t, r.Ready)
	require.Equal(t, github.SourceGHToken, r.CredentialSource)
	require.Contains(t, r.Reason, "give the token in GH_TOKEN the admin:repo_hook scope")
	require.NotContains(t, r.Reason, "gh auth")

	h.gh.SetToken("rotated-away")
	r = p.Readiness(ctx)
	require.False(t, r.Ready)
	require.Contains(t, r.Reason, "GitHub rejected the token from GH_TOKEN")
	h.seen(r.Reason)
}
