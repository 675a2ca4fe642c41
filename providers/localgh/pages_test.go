package localgh_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers/github/githubtest"
)

// GitHub lists reviews oldest first, 100 a page at most: the 101st and
// later are on the next pages, which the Link header names.
func TestReviewsPastTheFirstPage(t *testing.T) {
	x := openWatched(t)
	for i := range 150 {
		x.gh.AddReview(repoName, 7, githubtest.Review{User: fmt.Sprintf("reviewer%d", i), State: "COMMENTED"})
	}
	evs := x.poll()
	require.Equal(t, 150, len(evs))
	require.Equal(t, "PR acme/widgets#7 review COMMENTED by reviewer149", evs[149].Summary)

	// Quiet: every page of every list answers 304; no quota.
	x.gh.ResetLog()
	cursor := x.h.Cursor
	require.Empty(t, x.poll())
	require.Equal(t, cursor, x.h.Cursor)
	require.Equal(t, 0, x.gh.QuotaUsed())
	require.Len(t, x.gh.Requests(), 6, "pull, reviews (2 pages), check runs, status, comments")
	for _, r := range x.gh.Requests() {
		require.Equal(t, http.StatusNotModified, r.Status, "%s %s?%s", r.Method, r.Path, r.Query)
	}

	// The first page stays the same as reviews are added after it.
	x.gh.AddReview(repoName, 7, githubtest.Review{User: "last", State: "APPROVED"})
	evs = x.poll()
	require.Equal(t, []string{"github.pull_request_review.submitted"}, types(evs))
	require.Equal(t, "last", data(t, evs[0])["actor"])
	x.gh.Verify(t)
}

func TestChecksPastTheFirstPage(t *testing.T) {
	x := openWatched(t)
	head := x.gh.Head(repoName, 7)
	for i := range 119 {
		x.gh.SetCheckRun(repoName, head, fmt.Sprintf("check-%03d", i), "completed", "success")
	}
	x.gh.SetCheckRun(repoName, head, "check-119", "completed", "failure")
	evs := x.poll()
	require.Equal(t, []string{"github.check_suite.completed"}, types(evs))
	d := data(t, evs[0])
	require.Equal(t, "failure", d["conclusion"], "the failed check is on the second page")
	require.Len(t, d["checks"], 120)
	x.gh.Verify(t)
}

func TestRepoVerdictUsesEveryCheck(t *testing.T) {
	x := newHarness(t, nil)
	x.gh.AddRepo(repoName)
	x.watch("github:acme/widgets", sentinel.UntilNever)
	require.Empty(t, x.poll())
	x.gh.OpenPR(repoName, githubtest.PR{Number: 5})
	head := x.gh.Head(repoName, 5)
	for i := range 119 {
		x.gh.SetCheckRun(repoName, head, fmt.Sprintf("check-%03d", i), "completed", "success")
	}
	x.gh.SetCheckRun(repoName, head, "check-119", "completed", "failure")
	evs := x.poll()
	require.Equal(t, []string{"github.pull_request.opened", "github.check_suite.completed"}, types(evs))
	require.Equal(t, "failure", data(t, evs[1])["conclusion"])
	require.Equal(t, []any{"check-119"}, data(t, evs[1])["failed"])
	x.gh.Verify(t)
}
