package githubapp_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/githubapp"
)

func TestCreateOnCoveredRepository(t *testing.T) {
	h := newHarness(t)
	p := h.provider()
	ctx := ctxT(t)

	hd, err := p.Create(ctx, providers.CreateRequest{SentinelID: "sen_1", Spec: spec("github:" + fixtureRepo + "#2")})
	require.NoError(t, err)
	require.Equal(t, githubapp.RouteKey, providers.HookKeyOf(hd))
	require.Equal(t, fixtureRepo, hd.StateString("repo"))
	require.True(t, p.Covers(ctx, spec("github:"+fixtureRepo)))
	require.Zero(t, h.gh.Count("", "/repos/"), "a covered repository needs no repository hook")

	st, err := p.Status(ctx, hd)
	require.NoError(t, err)
	require.True(t, st.OK, st.Detail)
	require.True(t, h.samples.credentials()["app"], "App calls report their rate limit")
	require.True(t, h.samples.credentials()["installation:"+itoa(h.inst)], "installation calls report theirs")
	h.gh.Verify(t)
}

func TestCreateOutsideTheInstallationNamesTheFix(t *testing.T) {
	h := newHarness(t)
	p := h.provider()
	ctx := ctxT(t)

	_, err := p.Create(ctx, providers.CreateRequest{SentinelID: "sen_1", Spec: spec("github:acme/elsewhere#1")})
	require.Error(t, err)
	require.True(t, errors.Is(err, githubapp.ErrNotInstalled), err)
	require.Contains(t, err.Error(), "install the App on that repository")
	require.Contains(t, err.Error(), "acme/elsewhere")
	require.False(t, p.Covers(ctx, spec("github:acme/elsewhere")))

	// The listing is trusted for CoverageTTL: a second miss asks nothing.
	calls := h.gh.Count("", "/app/installations")
	_, err = p.Create(ctx, providers.CreateRequest{SentinelID: "sen_2", Spec: spec("github:acme/elsewhere#2")})
	require.ErrorIs(t, err, githubapp.ErrNotInstalled)
	require.Equal(t, calls, h.gh.Count("", "/app/installations"))
}

func TestCreateRefusesSeveralRepositories(t *testing.T) {
	h := newHarness(t)
	_, err := h.provider().Create(ctxT(t), providers.CreateRequest{Spec: spec("github:"+fixtureRepo, "github:acme/other")})
	require.ErrorIs(t, err, githubapp.ErrSeveralRepositories)
}

func TestNotSetUpIsNotReadyAndOwnsNoRoute(t *testing.T) {
	h := newHarness(t)
	h.creds.set(githubapp.FieldWebhookSecret, "")
	p := h.provider()
	r := p.Readiness(ctxT(t))
	require.False(t, r.Ready)
	require.Contains(t, r.Fix, "sentinel setup github-app")
	require.Empty(t, p.RouteKey())
	_, err := p.ParseInbound(ctxT(t), delivery(t, "pull_request", "pull_request_closed.json", testSecret), hdEmpty())
	require.ErrorIs(t, err, providers.ErrUnknownHook)
}
