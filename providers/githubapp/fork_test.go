package githubapp_test

import (
	"errors"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/github/githubtest"
	"github.com/agentproto/sentinel/providers/githubapp"
)

// The heads of the fork fixtures (copies of providers/webhook's real fork
// payloads): check_suite_fork.json is PR 2's head, workflow_run_fork.json
// a run from contributor/Hello-World.
const (
	forkRepo = "contributor/Hello-World"
	suiteSHA = "ec26c3e57ca3a959ca5aad62de7213c562f8c821"
	runSHA   = "5779607b49aab1200488439f02372c57b4f75444"
)

// TestForkPRCIThroughTheAppRouteReachesThePR: GitHub sends a fork PR's
// check suite and workflow run with no pull_requests. Through the App's
// route the provider asks GitHub, with the installation's token, which
// open PR has the commit as its head, caches the answer, and the event
// lands on the PR, so the PR's sentinel is given it.
func TestForkPRCIThroughTheAppRouteReachesThePR(t *testing.T) {
	h := newHarness(t)
	h.gh.OpenPR(fixtureRepo, githubtest.PR{Number: 2, Head: suiteSHA, HeadRepo: forkRepo})
	h.gh.OpenPR(fixtureRepo, githubtest.PR{Number: 3, Head: runSHA, HeadRepo: forkRepo})
	h.gh.OpenPR(fixtureRepo, githubtest.PR{Number: 4, Head: runSHA, HeadRepo: "someone-else/Hello-World"})
	pulls := func(sha string) int {
		return h.gh.Count(http.MethodGet, "/repos/"+fixtureRepo+"/commits/"+sha+"/pulls")
	}
	p := h.provider()
	ctx := ctxT(t)
	pr2, err := p.Create(ctx, providers.CreateRequest{SentinelID: "sen_2", Spec: spec("github:" + fixtureRepo + "#2")})
	require.NoError(t, err)
	pr3, err := p.Create(ctx, providers.CreateRequest{SentinelID: "sen_3", Spec: spec("github:" + fixtureRepo + "#3")})
	require.NoError(t, err)

	evs, err := p.ParseInbound(ctx, delivery(t, "check_suite", "check_suite_fork.json", testSecret), hdEmpty())
	require.NoError(t, err)
	require.Len(t, evs, 1)
	require.Equal(t, "github:"+fixtureRepo+"#2", evs[0].Subject)
	require.Equal(t, "github.check_suite.completed", evs[0].Type)
	require.Equal(t, githubapp.Source, evs[0].Source)
	require.True(t, p.Concerns(pr2, evs), "the fork PR's sentinel is given its CI")
	require.Equal(t, 1, pulls(suiteSHA))
	require.True(t, h.samples.credentials()["installation:"+itoa(h.inst)], "asked with the installation's token")

	again := delivery(t, "check_suite", "check_suite_fork.json", testSecret)
	again.Header.Set("X-GitHub-Delivery", "72d3162e-cc78-11e3-81ab-4c9367dc0959")
	_, err = p.ParseInbound(ctx, again, hdEmpty())
	require.NoError(t, err)
	require.Equal(t, 1, pulls(suiteSHA), "the answer is cached")

	// The run names its head repository: only the PR from that fork.
	evs, err = p.ParseInbound(ctx, delivery(t, "workflow_run", "workflow_run_fork.json", testSecret), hdEmpty())
	require.NoError(t, err)
	require.Len(t, evs, 1)
	require.Equal(t, "github:"+fixtureRepo+"#3", evs[0].Subject)
	require.Equal(t, []string{"github:" + fixtureRepo + "#3", "github:" + fixtureRepo, "github:Codertocat"}, evs[0].Subjects)
	require.True(t, p.Concerns(pr3, evs))
	h.gh.Verify(t)
}

// TestForkLookupUnansweredThroughTheAppRoute: when GitHub cannot say which
// PR a fork's commit heads (a 5xx), the App's delivery is refused with 503
// github_lookup_failed (GitHub's delivery fails, reconciliation brings it
// again); the redelivery lands on the PR, never first on the repository.
func TestForkLookupUnansweredThroughTheAppRoute(t *testing.T) {
	h := newHarness(t)
	h.gh.OpenPR(fixtureRepo, githubtest.PR{Number: 2, Head: suiteSHA, HeadRepo: forkRepo})
	p := h.provider()
	ctx := ctxT(t)
	h.gh.ServerErrors("/repos/"+fixtureRepo+"/commits/", 0)
	_, err := p.ParseInbound(ctx, delivery(t, "check_suite", "check_suite_fork.json", testSecret), hdEmpty())
	var ie *providers.InboundError
	require.True(t, errors.As(err, &ie), "%v", err)
	require.Equal(t, http.StatusServiceUnavailable, ie.Status)
	require.Equal(t, githubapp.CodeLookupFailed, ie.Code)
	h.gh.ClearFaults()
	evs, err := p.ParseInbound(ctx, delivery(t, "check_suite", "check_suite_fork.json", testSecret), hdEmpty())
	require.NoError(t, err)
	require.Len(t, evs, 1)
	require.Equal(t, "github:"+fixtureRepo+"#2", evs[0].Subject, "the redelivery lands on the PR")
}

// TestForkCIOfAnUncoveredRepositoryStaysAtTheRepository: a CI delivery for
// a repository no installation covers (the App was removed from it while
// the delivery was under way) asks GitHub nothing with any token and
// stays at the repository.
func TestForkCIOfAnUncoveredRepositoryStaysAtTheRepository(t *testing.T) {
	h := newHarness(t)
	h.gh.OpenPR(fixtureRepo, githubtest.PR{Number: 2, Head: suiteSHA, HeadRepo: forkRepo})
	h.gh.SetInstallationRepos(h.inst)
	p := h.provider()
	evs, err := p.ParseInbound(ctxT(t), delivery(t, "check_suite", "check_suite_fork.json", testSecret), hdEmpty())
	require.NoError(t, err)
	require.Len(t, evs, 1)
	require.Equal(t, "github:"+fixtureRepo, evs[0].Subject)
	require.Zero(t, h.gh.Count(http.MethodGet, "/repos/"+fixtureRepo+"/commits/"))
}
