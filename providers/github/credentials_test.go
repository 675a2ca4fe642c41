package github_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/github"
	"github.com/agentproto/sentinel/providers/github/githubtest"
)

// runnerWith is a gh runner whose environment is exactly env, with a gh
// path that does not exist: nothing may run gh.
func runnerWith(env ...string) *github.Runner {
	return github.NewRunner(github.Config{Path: "/nonexistent/gh", Env: env})
}

func TestResolveCredentialsSourceAndAPI(t *testing.T) {
	cases := []struct {
		name              string
		env               []string
		apiURL            string
		source, host, api string
	}{
		{"GH_TOKEN wins", []string{"GH_TOKEN=ghp_a", "GITHUB_TOKEN=ghp_b"}, "", github.SourceGHToken, "github.com", "https://api.github.com"},
		{"GITHUB_TOKEN next", []string{"GH_TOKEN=", "GITHUB_TOKEN=ghp_b"}, "", github.SourceGitHubToken, "github.com", "https://api.github.com"},
		{"gh without a token", nil, "", github.SourceGH, "github.com", "https://api.github.com"},
		{"GH_HOST names Enterprise", []string{"GH_TOKEN=x", "GH_HOST=ghe.example.com"}, github.DefaultAPIURL, github.SourceGHToken, "ghe.example.com", "https://ghe.example.com/api/v3"},
		{"api_url names Enterprise", []string{"GITHUB_TOKEN=x"}, "https://ghe.example.com/api/v3/", github.SourceGitHubToken, "ghe.example.com", "https://ghe.example.com/api/v3"},
		{"GH_ENTERPRISE_TOKEN first on Enterprise", []string{"GH_TOKEN=a", "GITHUB_ENTERPRISE_TOKEN=b", "GH_ENTERPRISE_TOKEN=c", "GH_HOST=ghe.example.com"}, "", github.SourceGHEnterpriseToken, "ghe.example.com", "https://ghe.example.com/api/v3"},
		{"GITHUB_ENTERPRISE_TOKEN next on Enterprise", []string{"GH_TOKEN=a", "GITHUB_ENTERPRISE_TOKEN=b"}, "https://ghe.example.com/api/v3", github.SourceGitHubEnterpriseToken, "ghe.example.com", "https://ghe.example.com/api/v3"},
		{"Enterprise variables ignored for github.com", []string{"GH_ENTERPRISE_TOKEN=c"}, "", github.SourceGH, "github.com", "https://api.github.com"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := github.ResolveCredentials(runnerWith(tc.env...), tc.apiURL)
			require.NoError(t, err)
			require.Equal(t, tc.source, c.Source)
			require.Equal(t, tc.host, c.Host)
			require.Equal(t, tc.api, c.APIBase)
			require.Equal(t, tc.source != github.SourceGH, c.InProcess())
		})
	}
	for _, bad := range []string{"ftp://x", "https://user:pw@ghe.example.com/api/v3", "https://ghe.example.com/api/v3?x=1", "not a url"} {
		_, err := github.ResolveCredentials(runnerWith(), bad)
		require.Error(t, err, bad)
		require.NotContains(t, err.Error(), "pw@", "the error never echoes credentials")
	}
}

// Readiness names the source; an environment token is ready without gh,
// and gh's absence is reported only for the gh source.
func TestCredentialsReadinessNamesTheSource(t *testing.T) {
	ctx := context.Background()
	c, err := github.ResolveCredentials(runnerWith("GH_TOKEN=ghp_0123456789abcdef0123"), "")
	require.NoError(t, err)
	require.Equal(t, providers.Readiness{Ready: true, CredentialSource: "GH_TOKEN"}, c.Readiness(ctx))

	c, err = github.ResolveCredentials(runnerWith(), "")
	require.NoError(t, err)
	r := c.Readiness(ctx)
	require.False(t, r.Ready)
	require.Equal(t, "gh", r.CredentialSource)
	require.Contains(t, r.Reason, github.InstallHint)
}

// fmt never prints an environment token.
func TestEnvTokenNeverPrints(t *testing.T) {
	c, err := github.ResolveCredentials(runnerWith("GITHUB_TOKEN=ghp_supersecretvalue123456"), "")
	require.NoError(t, err)
	for _, s := range []string{fmt.Sprint(c.Token), fmt.Sprintf("%v %+v %#v %s", c, c, c.Token, c.Token)} {
		require.NotContains(t, s, "supersecret")
	}
}

// Client.API manages hooks in-process against the fake GitHub with a
// token from the environment, with gh nowhere: create, read, update,
// delete, and the classified errors Runner.API gives.
func TestClientAPIManagesHooksInProcess(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // no gh anywhere
	s := githubtest.New(t, githubtest.Options{})
	s.AddRepo("acme/widgets")
	tok := s.Token()
	creds, err := github.ResolveCredentials(runnerWith("GH_TOKEN="+tok), "")
	require.NoError(t, err)
	c, err := github.NewClient(github.ClientConfig{BaseURL: creds.APIBase, Token: creds.Token, HTTP: s.HTTPClient(), Now: s.Now})
	require.NoError(t, err)
	ctx := context.Background()

	body := []byte(`{"name":"web","active":true,"events":["push"],"config":{"url":"https://x.example/inbound/sentinel-k","content_type":"json","secret":"s3cret-hook-secret","insecure_ssl":"0"}}`)
	status, _, resp, err := c.API(ctx, http.MethodPost, "repos/acme/widgets/hooks", body)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, status)
	require.Contains(t, string(resp), `"id"`)
	hooks := s.Hooks("acme/widgets")
	require.Len(t, hooks, 1)
	require.Equal(t, "s3cret-hook-secret", hooks[0].Secret)
	path := fmt.Sprintf("repos/acme/widgets/hooks/%d", hooks[0].ID)

	status, _, _, err = c.API(ctx, http.MethodPatch, path, []byte(`{"active":true,"events":["push"],"config":{"url":"https://y.example/inbound/sentinel-k","content_type":"json","insecure_ssl":"0"}}`))
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "https://y.example/inbound/sentinel-k", s.Hooks("acme/widgets")[0].URL)

	status, _, _, err = c.API(ctx, http.MethodGet, path, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, status)

	status, _, _, err = c.API(ctx, http.MethodDelete, path, nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusNoContent, status)
	require.Empty(t, s.Hooks("acme/widgets"))

	status, _, _, err = c.API(ctx, http.MethodDelete, path, nil)
	require.Equal(t, http.StatusNotFound, status)
	require.Equal(t, providers.ReasonNotFound, providers.ReasonOf(err))

	_, _, _, err = c.API(ctx, http.MethodGet, "repos/acme/../secrets", nil)
	require.Equal(t, providers.ReasonInvalid, providers.ReasonOf(err), "a dot segment is refused without a request")

	// A rejected token names its source and the fix, never the token.
	s.SetToken("another-token")
	status, _, _, err = c.API(ctx, http.MethodGet, "user", nil)
	require.Equal(t, http.StatusUnauthorized, status)
	require.Equal(t, providers.ReasonAuth, providers.ReasonOf(err))
	require.Contains(t, err.Error(), "GitHub rejected the token from GH_TOKEN")
	require.NotContains(t, err.Error(), tok)
	s.Verify(t)
}
