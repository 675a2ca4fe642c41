package githubapp_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/github/githubtest"
	"github.com/agentproto/sentinel/providers/githubapp"
)

// TestAppOnGitHubEnterprise: with baseUrl a GitHub Enterprise Server REST
// root (https://HOST/api/v3), every call of the App goes under it: the
// JWT's (installations, token mints, the delivery log and its cursor
// pages, redeliveries) and the installation's (its repositories, a
// repository's reads).
func TestAppOnGitHubEnterprise(t *testing.T) {
	h := newHarness(t)
	h.creds.set(githubapp.FieldBaseURL, "https://github.com/api/v3")
	p := h.provider()
	ctx := ctxT(t)
	for i := range 120 {
		d := githubtest.Delivery{Event: "pull_request"}
		if i == 0 {
			d.StatusCode = http.StatusBadGateway // on the second page
		}
		h.gh.AddAppDelivery(d)
	}

	require.True(t, p.Readiness(ctx).Ready)
	_, err := p.Create(ctx, providers.CreateRequest{SentinelID: "sen_1", Spec: spec("github:" + fixtureRepo + "#2")})
	require.NoError(t, err)
	c, err := p.InstallationClient(ctx, h.inst)
	require.NoError(t, err)
	require.Equal(t, "https://github.com/api/v3", c.BaseURL())
	_, err = c.Get(ctx, "repos/"+fixtureRepo+"/pulls")
	require.NoError(t, err)
	res, err := p.Reconcile(ctx, hdEmpty())
	require.NoError(t, err)
	require.Equal(t, 120, res.Checked, "the cursor's next page is followed under /api/v3")
	require.Equal(t, 1, res.Redelivered)

	reqs := h.gh.Requests()
	require.NotEmpty(t, reqs)
	for _, r := range reqs {
		require.True(t, r.Enterprise, "%s %s went outside /api/v3", r.Method, r.Path)
	}
	require.Positive(t, h.gh.Count(http.MethodPost, "/app/installations/"))
	require.Equal(t, 2, h.gh.Count(http.MethodGet, "/app/hook/deliveries"))
	h.gh.Verify(t)
}
