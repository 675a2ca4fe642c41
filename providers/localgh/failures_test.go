package localgh_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers/github"
	"github.com/agentproto/sentinel/providers/github/githubtest"
	"github.com/agentproto/sentinel/providers/localgh"
)

func TestSecondaryRateLimitWithRetryAfter(t *testing.T) {
	x := openWatched(t)
	x.gh.SecondaryRateLimit("/repos/acme/widgets/pulls/7", 120*time.Second, 1)
	x.gh.AddReview(repoName, 7, githubtest.Review{User: "bob", State: "APPROVED"})
	x.gh.ResetLog()
	require.Empty(t, x.poll())
	require.Equal(t, 1, len(x.gh.Requests()))
	st := x.status()
	require.False(t, st.OK)
	require.Contains(t, st.Detail, "secondary rate limit")
	require.Equal(t, 1, st.Extra["consecutiveFailures"])
	require.Equal(t, true, st.Extra["backingOff"])
	require.Equal(t, sentinel.FormatTime(x.clk.Now().Add(120*time.Second)), st.Extra["nextRetryAt"], "Retry-After beats the 30 s base")
	require.Contains(t, st.Extra, "rateLimitedUntil")

	for _, step := range []time.Duration{30 * time.Second, 60 * time.Second, 29 * time.Second} {
		x.clk.Advance(step)
		require.Empty(t, x.poll())
		require.Equal(t, 1, len(x.gh.Requests()), "no request until Retry-After passes")
	}
	x.clk.Advance(time.Second)
	evs := x.poll()
	require.Equal(t, []string{"github.pull_request_review.submitted"}, types(evs), "nothing lost")
	st = x.status()
	require.True(t, st.OK)
	require.Equal(t, 0, st.Extra["consecutiveFailures"])
	x.gh.Verify(t)
}

func TestServerErrorStormBacksOff(t *testing.T) {
	x := openWatched(t)
	x.gh.ServerErrors("/repos/", 0)
	x.gh.ResetLog()
	waits := []time.Duration{30, 60, 120, 240, 300, 300}
	for i, w := range waits {
		require.Empty(t, x.poll())
		require.Equal(t, i+1, len(x.gh.Requests()), "one request per attempt")
		st := x.status()
		require.False(t, st.OK)
		require.Contains(t, st.Detail, "HTTP 502")
		require.Equal(t, i+1, st.Extra["consecutiveFailures"])
		x.clk.Advance(w*time.Second - time.Millisecond)
		require.Empty(t, x.poll())
		require.Equal(t, i+1, len(x.gh.Requests()), "no call during backoff %d", i)
		x.clk.Advance(time.Millisecond)
	}
	x.gh.ClearFaults()
	x.gh.Close(repoName, 7)
	evs := x.poll()
	require.Equal(t, []string{"github.pull_request.closed"}, types(evs))
	require.True(t, x.status().OK)
	x.gh.Verify(t)
}

func TestGHMissing(t *testing.T) {
	requireGH(t)
	s := githubtest.New(t, githubtest.Options{})
	s.OpenPR(repoName, githubtest.PR{Number: 7})
	runner := github.NewRunner(github.Config{Path: filepath.Join(t.TempDir(), "gh"), Env: s.Env(s.Token())})
	clk := &clock{t: s.Now()}
	p, err := localgh.New(localgh.Config{Runner: runner, HTTP: s.HTTPClient(), Now: clk.Now})
	require.NoError(t, err)
	rd := p.Readiness(context.Background())
	require.False(t, rd.Ready)
	require.Contains(t, rd.Reason, "install the GitHub CLI (gh)")

	x := &harness{t: t, gh: s, p: p, clk: clk}
	x.watch(prSubject, sentinel.UntilSubjectTerminal)
	require.Empty(t, x.poll())
	st := x.status()
	require.False(t, st.OK)
	require.Contains(t, st.Detail, "install the GitHub CLI (gh)")
	require.Empty(t, s.Requests())
}

func TestLoggedOut(t *testing.T) {
	x := newHarness(t, func(*githubtest.Server) string { return "" })
	x.gh.OpenPR(repoName, githubtest.PR{Number: 7})
	rd := x.p.Readiness(context.Background())
	require.False(t, rd.Ready)
	require.Contains(t, rd.Reason, "run gh auth login")
	x.watch(prSubject, sentinel.UntilSubjectTerminal)
	require.Empty(t, x.poll())
	st := x.status()
	require.False(t, st.OK)
	require.Contains(t, st.Detail, "run gh auth login")
	require.Empty(t, x.gh.Requests())
}

func TestReadyAndRevokedToken(t *testing.T) {
	x := newHarness(t, nil)
	require.Equal(t, true, x.p.Readiness(context.Background()).Ready)
	x.gh.OpenPR(repoName, githubtest.PR{Number: 7})
	x.watch(prSubject, sentinel.UntilSubjectTerminal)
	require.Empty(t, x.poll())
	x.gh.SetToken("ghp_revokedrevokedrevoked00000000000")
	require.Empty(t, x.poll())
	st := x.status()
	require.False(t, st.OK)
	require.Contains(t, st.Detail, "gh auth login")
	require.NotContains(t, st.Detail, x.gh.Token())
	x.gh.Verify(t)
}
