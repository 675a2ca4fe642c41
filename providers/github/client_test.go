package github_test

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/github"
	"github.com/agentproto/sentinel/providers/github/githubtest"
)

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *clock) Advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// countingToken is a StaticToken-like source that counts reads and can be
// swapped, standing in for `gh auth token` after a rotation.
type countingToken struct {
	mu          sync.Mutex
	tok         string
	cached      string
	reads       int
	invalidated int
}

func (c *countingToken) Token(context.Context) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cached == "" {
		c.reads++
		c.cached = c.tok
	}
	return c.cached, nil
}

func (c *countingToken) Invalidate() { c.mu.Lock(); c.cached = ""; c.invalidated++; c.mu.Unlock() }

func newClient(t *testing.T, s *githubtest.Server, ts github.TokenSource, clk *clock) *github.Client {
	t.Helper()
	c, err := github.NewClient(github.ClientConfig{HTTP: s.HTTPClient(), Token: ts, Now: clk.Now})
	require.NoError(t, err)
	return c
}

func TestClientConditionalGET(t *testing.T) {
	s := githubtest.New(t, githubtest.Options{})
	s.OpenPR("acme/widgets", githubtest.PR{Number: 7})
	clk := &clock{t: s.Now()}
	c := newClient(t, s, github.StaticToken(s.Token()), clk)
	ctx := context.Background()
	require.Equal(t, "https://api.github.com", c.BaseURL())

	first, err := c.Get(ctx, "/repos/acme/widgets/pulls/7")
	require.NoError(t, err)
	require.False(t, first.NotModified)
	require.Equal(t, githubtest.DefaultStart.Add(time.Minute), first.Date)
	for range 3 {
		again, err := c.Get(ctx, "repos/acme/widgets/pulls/7")
		require.NoError(t, err)
		require.True(t, again.NotModified)
		require.Equal(t, first.Body, again.Body, "a 304 returns the cached body")
		require.Equal(t, first.ETag, again.ETag)
	}
	st := c.Stats()
	require.Equal(t, int64(4), st.Requests)
	require.Equal(t, int64(3), st.NotModified)
	require.Equal(t, int64(1), st.QuotaUsed)
	require.Equal(t, 1, s.QuotaUsed())
	require.Equal(t, 4999, st.RateRemaining)
	require.Equal(t, 5000, st.RateLimit)

	s.PushHead("acme/widgets", 7, githubtest.SHA("new"))
	var pr github.PullRequest
	resp, err := c.GetJSON(ctx, "/repos/acme/widgets/pulls/7", &pr)
	require.NoError(t, err)
	require.False(t, resp.NotModified)
	require.Equal(t, githubtest.SHA("new"), pr.Head.SHA)
	s.Verify(t)
}

func TestClientRateLimits(t *testing.T) {
	tests := []struct {
		name   string
		inject func(s *githubtest.Server)
		wait   time.Duration
	}{
		{name: "secondary 403 with Retry-After", inject: func(s *githubtest.Server) {
			s.SecondaryRateLimit("/repos/", 90*time.Second, 1)
		}, wait: 90 * time.Second},
		{name: "429 with Retry-After", inject: func(s *githubtest.Server) {
			s.TooManyRequests("/repos/", 30*time.Second, 1)
		}, wait: 30 * time.Second},
		{name: "secondary 403 without Retry-After", inject: func(s *githubtest.Server) {
			s.Inject(githubtest.Fault{Path: "/repos/", Status: http.StatusForbidden, Times: 1,
				Body: `{"message":"You have exceeded a secondary rate limit"}`})
		}, wait: github.SecondaryLimitWait},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := githubtest.New(t, githubtest.Options{})
			s.OpenPR("acme/widgets", githubtest.PR{Number: 7})
			clk := &clock{t: s.Now()}
			c := newClient(t, s, github.StaticToken(s.Token()), clk)
			ctx := context.Background()
			tc.inject(s)

			_, err := c.Get(ctx, "/repos/acme/widgets/pulls/7")
			var pe *providers.Error
			require.ErrorAs(t, err, &pe)
			require.Equal(t, providers.ReasonRateLimited, pe.Reason)
			require.True(t, pe.Retryable)
			require.Equal(t, tc.wait, pe.RetryAfter)

			clk.Advance(tc.wait - time.Second)
			_, err = c.Get(ctx, "/repos/acme/widgets/pulls/7")
			require.ErrorAs(t, err, &pe)
			require.Equal(t, providers.ReasonRateLimited, pe.Reason)
			require.Equal(t, time.Second, pe.RetryAfter)
			require.Equal(t, 1, s.Count("", "/repos/"), "no request while the wait is in force")
			require.Equal(t, int64(1), c.Stats().Refused)

			clk.Advance(time.Second)
			_, err = c.Get(ctx, "/repos/acme/widgets/pulls/7")
			require.NoError(t, err)
			s.Verify(t)
		})
	}
}

func TestClientPrimaryQuotaExhausted(t *testing.T) {
	s := githubtest.New(t, githubtest.Options{})
	s.OpenPR("acme/widgets", githubtest.PR{Number: 7})
	clk := &clock{t: s.Now()}
	c := newClient(t, s, github.StaticToken(s.Token()), clk)
	reset := clk.Now().Add(10 * time.Minute).Truncate(time.Second)
	s.Inject(githubtest.Fault{Path: "/repos/", Status: http.StatusForbidden, Times: 1, Header: http.Header{
		"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Limit": {"5000"}, "X-Ratelimit-Reset": {itoa(reset.Unix())},
	}, Body: `{"message":"API rate limit exceeded"}`})
	_, err := c.Get(context.Background(), "/repos/acme/widgets/pulls/7")
	require.Equal(t, providers.ReasonRateLimited, providers.ReasonOf(err))
	require.Equal(t, 0, c.Stats().RateRemaining)
	_, err = c.Get(context.Background(), "/user")
	require.Equal(t, providers.ReasonRateLimited, providers.ReasonOf(err))
	require.Equal(t, 1, len(s.Requests()))
	clk.Advance(10 * time.Minute)
	_, err = c.Get(context.Background(), "/user")
	require.NoError(t, err)
}

func TestClientServerErrorsRetryable(t *testing.T) {
	s := githubtest.New(t, githubtest.Options{})
	s.OpenPR("acme/widgets", githubtest.PR{Number: 7})
	c := newClient(t, s, github.StaticToken(s.Token()), &clock{t: s.Now()})
	s.ServerErrors("/repos/", 1)
	_, err := c.Get(context.Background(), "/repos/acme/widgets/pulls/7")
	var pe *providers.Error
	require.ErrorAs(t, err, &pe)
	require.Equal(t, providers.ReasonServer, pe.Reason)
	require.True(t, pe.Retryable)
	require.Contains(t, pe.Error(), "HTTP 502")
	_, err = c.Get(context.Background(), "/repos/acme/widgets/pulls/7")
	require.NoError(t, err, "5xx does not block the client")
}

func TestClientRereadsTokenAfter401(t *testing.T) {
	s := githubtest.New(t, githubtest.Options{})
	s.OpenPR("acme/widgets", githubtest.PR{Number: 7})
	ts := &countingToken{tok: s.Token()}
	c := newClient(t, s, ts, &clock{t: s.Now()})
	ctx := context.Background()
	_, err := c.Get(ctx, "/repos/acme/widgets/pulls/7")
	require.NoError(t, err)

	// The token is rotated: gh now has the new one, the cache the old.
	s.SetToken("ghp_rotatedrotatedrotated000000000000")
	ts.mu.Lock()
	ts.tok = "ghp_rotatedrotatedrotated000000000000"
	ts.mu.Unlock()
	_, err = c.Get(ctx, "/repos/acme/widgets/pulls/7")
	require.NoError(t, err)
	require.Equal(t, 2, ts.reads)
	require.Equal(t, 1, ts.invalidated)

	// A revoked token: one re-read, then an auth error naming the fix.
	s.SetToken("ghp_somethingelse00000000000000000000")
	_, err = c.Get(ctx, "/repos/acme/widgets/pulls/7")
	require.Equal(t, providers.ReasonAuth, providers.ReasonOf(err))
	require.Contains(t, err.Error(), "gh auth login")
	require.NotContains(t, err.Error(), "ghp_")
	require.Equal(t, 3, ts.reads)
	s.Verify(t)
}

func TestAuthFromGH(t *testing.T) {
	requireGH(t)
	s := githubtest.New(t, githubtest.Options{})
	s.OpenPR("acme/widgets", githubtest.PR{Number: 7})
	r := github.NewRunner(github.Config{Env: s.Env(s.Token())})
	a := github.NewAuth(r, "")
	require.Equal(t, "github.com", a.Host())
	tok, err := a.Token(context.Background())
	require.NoError(t, err)
	require.Equal(t, s.Token(), tok)
	c, err := github.NewClient(github.ClientConfig{HTTP: s.HTTPClient(), Token: a})
	require.NoError(t, err)
	_, err = c.Get(context.Background(), "/repos/acme/widgets/pulls/7")
	require.NoError(t, err)

	_, err = github.NewAuth(github.NewRunner(github.Config{Env: s.Env("")}), "").Token(context.Background())
	require.Equal(t, providers.ReasonAuth, providers.ReasonOf(err))
	require.Contains(t, err.Error(), "run gh auth login")
	s.Verify(t)
}

func TestHostAndAPIBase(t *testing.T) {
	tests := []struct {
		name, env, host, base string
	}{
		{name: "default", host: "github.com", base: "https://api.github.com"},
		{name: "GH_HOST github.com", env: "github.com", host: "github.com", base: "https://api.github.com"},
		{name: "enterprise", env: "ghe.example.com", host: "ghe.example.com", base: "https://ghe.example.com/api/v3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := []string{"PATH=/usr/bin"}
			if tc.env != "" {
				env = append(env, "GH_HOST="+tc.env)
			}
			r := github.NewRunner(github.Config{Env: env})
			require.Equal(t, tc.host, r.Host())
			require.Equal(t, tc.base, github.APIBase(r.Host()))
		})
	}
}

func TestReadiness(t *testing.T) {
	requireGH(t)
	s := githubtest.New(t, githubtest.Options{})
	tests := []struct {
		name   string
		runner *github.Runner
		ready  bool
		reason string
	}{
		{name: "ready", runner: github.NewRunner(github.Config{Env: s.Env(s.Token())}), ready: true},
		{name: "gh missing", runner: github.NewRunner(github.Config{Path: "/nonexistent/gh"}), reason: "install the GitHub CLI (gh)"},
		{name: "logged out", runner: github.NewRunner(github.Config{Env: s.Env("")}), reason: "run gh auth login"},
		{name: "nil runner", reason: "install the GitHub CLI (gh)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := github.Readiness(context.Background(), tc.runner, "")
			require.Equal(t, tc.ready, got.Ready)
			require.Contains(t, got.Reason, tc.reason)
		})
	}
	require.Empty(t, s.Requests(), "readiness is offline")
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestClientHoldsWhileItsCredentialIsPaused: Hold (the quota governor's
// cluster-wide pause) refuses every call on the client's credential
// without a request, GET and other methods alike, until the pause ends.
func TestClientHoldsWhileItsCredentialIsPaused(t *testing.T) {
	s := githubtest.New(t, githubtest.Options{})
	s.OpenPR("acme/widgets", githubtest.PR{Number: 7})
	clk := &clock{t: s.Now()}
	var mu sync.Mutex
	until := map[string]time.Time{"token": clk.Now().Add(time.Minute)}
	c, err := github.NewClient(github.ClientConfig{HTTP: s.HTTPClient(), Token: github.StaticToken(s.Token()), Now: clk.Now, Credential: "token",
		Hold: func(cred string) time.Time { mu.Lock(); defer mu.Unlock(); return until[cred] }})
	require.NoError(t, err)
	ctx := context.Background()

	_, err = c.Get(ctx, "/repos/acme/widgets/pulls/7")
	var pe *providers.Error
	require.ErrorAs(t, err, &pe)
	require.Equal(t, providers.ReasonRateLimited, pe.Reason)
	require.True(t, pe.Retryable)
	require.Equal(t, time.Minute, pe.RetryAfter)
	_, _, _, err = c.API(ctx, http.MethodPost, "repos/acme/widgets/hooks", []byte(`{}`))
	require.Equal(t, providers.ReasonRateLimited, providers.ReasonOf(err))
	require.Empty(t, s.Requests(), "no request while the credential is paused")
	require.Equal(t, int64(2), c.Stats().Refused)

	mu.Lock()
	until["other"] = clk.Now().Add(time.Hour) // another credential's pause
	mu.Unlock()
	clk.Advance(time.Minute)
	_, err = c.Get(ctx, "/repos/acme/widgets/pulls/7")
	require.NoError(t, err)
}
