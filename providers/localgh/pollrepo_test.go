package localgh_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers/github/githubtest"
)

func TestRepoScopeSequence(t *testing.T) {
	x := newHarness(t, nil)
	x.gh.OpenPR(repoName, githubtest.PR{Number: 1, Title: "Old open"})
	x.gh.SetCheckRun(repoName, x.gh.Head(repoName, 1), "build", "completed", "success")
	x.gh.OpenPR(repoName, githubtest.PR{Number: 2})
	x.gh.Merge(repoName, 2, "carol")
	x.gh.OpenPR(repoName, githubtest.PR{Number: 5, Title: "Waiting for CI"})
	x.watch("github:acme/widgets", sentinel.UntilNever)
	require.Empty(t, x.poll(), "the baseline records every PR silently, settled CI included")

	// Quiet: one conditional list, plus the checks of #5 (no verdict yet).
	x.gh.ResetLog()
	cursor := x.h.Cursor
	require.Empty(t, x.poll())
	require.Equal(t, cursor, x.h.Cursor)
	require.Equal(t, 0, x.gh.QuotaUsed())
	require.Equal(t, 1, x.gh.Count("GET", "/repos/acme/widgets/pulls"))
	require.Equal(t, 3, len(x.gh.Requests()))

	x.gh.OpenPR(repoName, githubtest.PR{Number: 3, Title: "New feature", Author: "dave", Draft: true})
	evs := x.poll()
	require.Equal(t, []string{"github.pull_request.opened"}, types(evs))
	require.Equal(t, "PR acme/widgets#3 opened by dave (draft) - New feature", evs[0].Summary)
	d := data(t, evs[0])
	require.Equal(t, "New feature", d["title"])
	require.Equal(t, "dave", d["author"])
	require.Equal(t, true, d["draft"])
	require.Equal(t, "https://github.com/acme/widgets/pull/3", d["url"])

	x.gh.SetDraft(repoName, 3, false)
	x.gh.AddReview(repoName, 1, githubtest.Review{User: "bob", State: "CHANGES_REQUESTED"})
	evs = x.poll()
	require.Equal(t, []string{"github.pull_request_review.submitted", "github.pull_request.ready_for_review"}, types(evs), "ascending PR number")
	require.Equal(t, "PR acme/widgets#1 review CHANGES_REQUESTED by bob - Old open", evs[0].Summary)

	head3 := x.gh.Head(repoName, 3)
	x.gh.SetCheckRun(repoName, head3, "test", "in_progress", "")
	x.gh.SetCheckRun(repoName, head3, "lint", "in_progress", "")
	require.Empty(t, x.poll())
	x.gh.SetCheckRun(repoName, head3, "test", "completed", "failure")
	evs = x.poll()
	require.Equal(t, []string{"github.check_suite.completed"}, types(evs))
	require.Equal(t, "CI failure for acme/widgets#3 - New feature", evs[0].Summary)
	require.Equal(t, []any{"test"}, data(t, evs[0])["failed"])
	x.gh.SetCheckRun(repoName, head3, "lint", "completed", "success")
	require.Empty(t, x.poll(), "one verdict per head")

	x.gh.PushHead(repoName, 3, githubtest.SHA("fix"))
	x.gh.SetCheckRun(repoName, githubtest.SHA("fix"), "test", "completed", "success")
	evs = x.poll()
	require.Equal(t, []string{"github.check_suite.completed"}, types(evs), "no synchronize in repo scope")
	require.Equal(t, "success", data(t, evs[0])["conclusion"])

	x.gh.Merge(repoName, 1, "carol")
	x.gh.OpenPR(repoName, githubtest.PR{Number: 4})
	x.gh.Close(repoName, 4)
	evs = x.poll()
	require.Equal(t, []string{"github.pull_request.closed", "github.pull_request.opened", "github.pull_request.closed"}, types(evs))
	require.Equal(t, true, data(t, evs[0])["merged"])
	require.True(t, evs[0].Terminal)
	require.Equal(t, false, data(t, evs[2])["merged"])
	require.Empty(t, x.poll())

	x.gh.Reopen(repoName, 4)
	require.Empty(t, x.poll(), "a reopened PR restarts from a fresh baseline")
	x.gh.Close(repoName, 4)
	evs = x.poll()
	require.Equal(t, []string{"github.pull_request.closed"}, types(evs))

	x.gh.SetCheckRun(repoName, x.gh.Head(repoName, 5), "build", "completed", "success")
	evs = x.poll()
	require.Equal(t, []string{"github.check_suite.completed"}, types(evs), "checks of an unchanged PR are still watched")
	x.gh.Verify(t)
}

func TestRepoScopeFailureKeepsState(t *testing.T) {
	x := newHarness(t, nil)
	x.gh.OpenPR(repoName, githubtest.PR{Number: 1})
	x.watch("github:acme/widgets", sentinel.UntilNever)
	require.Empty(t, x.poll())
	x.gh.OpenPR(repoName, githubtest.PR{Number: 2})
	x.gh.ServerErrors("/repos/acme/widgets/pulls/2/reviews", 1)
	require.Empty(t, x.poll())
	require.False(t, x.status().OK)
	x.clk.Advance(localghBackoff)
	evs := x.poll()
	require.Equal(t, []string{"github.pull_request.opened"}, types(evs), "the failed tick is replayed")
	require.True(t, x.status().OK)
	x.gh.Verify(t)
}
