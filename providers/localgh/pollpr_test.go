package localgh_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers/github/githubtest"
)

const prSubject = "github:acme/widgets#7"

// openWatched opens PR #7 and takes the baseline poll.
func openWatched(t *testing.T) *harness {
	t.Helper()
	x := newHarness(t, nil)
	x.gh.OpenPR(repoName, githubtest.PR{Number: 7, Title: "Add sprockets"})
	x.watch(prSubject, sentinel.UntilSubjectTerminal)
	require.Empty(t, x.poll(), "the first poll is the baseline")
	return x
}

func TestReviewLands(t *testing.T) {
	x := openWatched(t)
	x.gh.AddReview(repoName, 7, githubtest.Review{User: "bob", State: "APPROVED"})
	x.gh.AddReview(repoName, 7, githubtest.Review{User: "renovate[bot]", State: "COMMENTED", Association: "NONE"})
	evs := x.poll()
	require.Equal(t, []string{"github.pull_request_review.submitted", "github.pull_request_review.submitted"}, types(evs))
	d := data(t, evs[0])
	require.Equal(t, "APPROVED", d["state"])
	require.Equal(t, "bob", d["actor"])
	require.Equal(t, "MEMBER", d["authorAssociation"])
	require.Equal(t, false, d["actorIsBot"])
	require.Equal(t, "PR acme/widgets#7 review APPROVED by bob", evs[0].Summary)
	require.Equal(t, []string{"github:acme/widgets#7", "github:acme/widgets", "github:acme"}, evs[0].Subjects)
	require.False(t, evs[0].Terminal)
	d = data(t, evs[1])
	require.Equal(t, true, d["actorIsBot"])
	require.Equal(t, "NONE", d["authorAssociation"])
	require.Empty(t, x.poll())
	x.gh.Verify(t)
}

func TestNewPushThenGreenCI(t *testing.T) {
	x := newHarness(t, nil)
	x.gh.OpenPR(repoName, githubtest.PR{Number: 7})
	head1 := x.gh.Head(repoName, 7)
	x.gh.SetCheckRun(repoName, head1, "build", "completed", "success")
	x.watch(prSubject, sentinel.UntilSubjectTerminal)
	require.Empty(t, x.poll(), "checks green at the baseline are history")

	head2 := githubtest.SHA("second push")
	x.gh.PushHead(repoName, 7, head2)
	evs := x.poll()
	require.Equal(t, []string{"github.pull_request.synchronize"}, types(evs))
	require.Equal(t, head2, data(t, evs[0])["headSha"])
	require.Equal(t, "New commits pushed to acme/widgets#7 ("+head2[:7]+")", evs[0].Summary)

	x.gh.SetCheckRun(repoName, head2, "build", "in_progress", "")
	x.gh.SetStatus(repoName, head2, "ci/legacy", "pending")
	require.Empty(t, x.poll())

	x.gh.SetCheckRun(repoName, head2, "build", "completed", "success")
	x.gh.SetStatus(repoName, head2, "ci/legacy", "success")
	evs = x.poll()
	require.Equal(t, []string{"github.check_suite.completed"}, types(evs))
	d := data(t, evs[0])
	require.Equal(t, "success", d["conclusion"])
	require.Equal(t, []any{
		map[string]any{"name": "build", "conclusion": "success"},
		map[string]any{"name": "ci/legacy", "conclusion": "success"},
	}, d["checks"], "the same conclusion on a new head fires again")
	require.Equal(t, "Check suite success for acme/widgets#7", evs[0].Summary)

	// A push whose checks finish before the next poll: synchronize, then
	// the checks on the new head, in that order.
	head3 := githubtest.SHA("third push")
	x.gh.PushHead(repoName, 7, head3)
	x.gh.SetCheckRun(repoName, head3, "build", "completed", "success")
	evs = x.poll()
	require.Equal(t, []string{"github.pull_request.synchronize", "github.check_suite.completed"}, types(evs))
	require.Empty(t, x.poll())
	x.gh.Verify(t)
}

func TestRedCI(t *testing.T) {
	x := openWatched(t)
	head := x.gh.Head(repoName, 7)
	x.gh.SetCheckRun(repoName, head, "lint", "completed", "success")
	x.gh.SetCheckRun(repoName, head, "test", "completed", "failure")
	x.gh.SetCheckRun(repoName, head, "e2e", "in_progress", "")
	evs := x.poll()
	require.Len(t, evs, 1)
	d := data(t, evs[0])
	require.Equal(t, "failure", d["conclusion"])
	require.InDelta(t, 1, d["pending"], 0)
	require.Equal(t, "Check suite failure for acme/widgets#7", evs[0].Summary)

	x.gh.SetCheckRun(repoName, head, "e2e", "completed", "success")
	evs = x.poll()
	require.Len(t, evs, 1)
	require.Equal(t, "success", data(t, evs[0])["conclusion"])
	require.InDelta(t, 0, data(t, evs[0])["pending"], 0)

	// A re-run of the failed check that fails again is a new result with
	// a new id, even when the poll missed the run in progress.
	x.gh.RerunCheck(repoName, head, "test")
	x.gh.SetCheckRun(repoName, head, "test", "completed", "failure")
	again := x.poll()
	require.Len(t, again, 1)
	require.Equal(t, "failure", data(t, again[0])["conclusion"])
	require.NotEqual(t, evs[0].ID, again[0].ID)
	x.gh.Verify(t)
}

func TestMerged(t *testing.T) {
	x := openWatched(t)
	before := x.h
	x.gh.Merge(repoName, 7, "carol")
	evs := x.poll()
	require.Equal(t, []string{"github.pull_request.closed"}, types(evs))
	ev := evs[0]
	require.True(t, ev.Terminal)
	d := data(t, ev)
	require.Equal(t, true, d["merged"])
	require.Equal(t, "carol", d["actor"])
	require.Nil(t, d["late"])
	require.Equal(t, "PR acme/widgets#7 merged", ev.Summary)
	require.Equal(t, sentinel.FormatTime(x.gh.Now()), ev.Time, "the time is GitHub's merged_at")

	// A retried poll from the old cursor (the batch was not handled)
	// re-mints the same id, whatever the fetch time.
	x.clk.Advance(time.Hour)
	res, err := x.p.Poll(context.Background(), before, 100)
	require.NoError(t, err)
	require.Len(t, res.Events, 1)
	require.Equal(t, ev.ID, res.Events[0].ID)

	require.Empty(t, x.poll(), "the terminal event fires once")
	x.gh.Verify(t)
}

func TestClosedAndReopened(t *testing.T) {
	x := openWatched(t)
	x.gh.Close(repoName, 7)
	evs := x.poll()
	require.Equal(t, []string{"github.pull_request.closed"}, types(evs))
	require.Equal(t, false, data(t, evs[0])["merged"])
	require.Equal(t, "PR acme/widgets#7 closed", evs[0].Summary)
	first := evs[0].ID

	x.gh.Reopen(repoName, 7)
	require.Empty(t, x.poll(), "a reopen emits nothing")
	x.gh.Close(repoName, 7)
	evs = x.poll()
	require.Equal(t, []string{"github.pull_request.closed"}, types(evs))
	require.NotEqual(t, first, evs[0].ID, "a second closure is a new event")
	require.Empty(t, x.poll())
	x.gh.Verify(t)
}

func TestMergedBeforeFirstPoll(t *testing.T) {
	x := newHarness(t, nil)
	x.gh.OpenPR(repoName, githubtest.PR{Number: 7})
	x.gh.Merge(repoName, 7, "carol")
	x.watch(prSubject, sentinel.UntilSubjectTerminal)
	evs := x.poll()
	require.Equal(t, []string{"github.pull_request.closed"}, types(evs))
	require.True(t, evs[0].Terminal)
	d := data(t, evs[0])
	require.Equal(t, true, d["late"])
	require.Equal(t, true, d["merged"])
	for range 3 {
		require.Empty(t, x.poll(), "exactly once")
	}
	x.gh.Verify(t)
}

func TestCommentAdded(t *testing.T) {
	x := newHarness(t, nil)
	x.gh.OpenPR(repoName, githubtest.PR{Number: 7})
	old := x.gh.AddComment(repoName, 7, githubtest.Comment{User: "bob", Body: "existing"})
	x.watch(prSubject, sentinel.UntilSubjectTerminal)
	require.Empty(t, x.poll(), "existing comments are history")

	x.gh.AddComment(repoName, 7, githubtest.Comment{User: "dependabot[bot]", Body: "Bumps x\nfrom 1 to 2", Association: "NONE"})
	x.gh.EditComment(repoName, 7, old, "edited, not new")
	evs := x.poll()
	require.Equal(t, []string{"github.issue_comment.created"}, types(evs))
	d := data(t, evs[0])
	require.Equal(t, "dependabot[bot]", d["actor"])
	require.Equal(t, true, d["actorIsBot"])
	require.Equal(t, "NONE", d["authorAssociation"])
	require.Equal(t, "Bumps x\nfrom 1 to 2", d["body"])
	require.Equal(t, "New comment on acme/widgets#7 by dependabot[bot]", evs[0].Summary)

	x.gh.AddComment(repoName, 7, githubtest.Comment{User: "alice", Body: "second"})
	evs = x.poll()
	require.Len(t, evs, 1)
	require.Equal(t, "alice", data(t, evs[0])["actor"])
	require.Empty(t, x.poll())
	x.gh.Verify(t)
}

func TestQuietPollsCostNoQuota(t *testing.T) {
	x := openWatched(t)
	head := x.gh.Head(repoName, 7)
	x.gh.SetCheckRun(repoName, head, "build", "completed", "success")
	x.gh.AddReview(repoName, 7, githubtest.Review{User: "bob", State: "APPROVED"})
	require.Len(t, x.poll(), 2)
	require.Empty(t, x.poll())
	x.gh.ResetLog()
	before := x.p.Client().Stats()
	cursor := x.h.Cursor
	for range 5 {
		require.Empty(t, x.poll())
		require.Equal(t, cursor, x.h.Cursor, "a quiet poll leaves the cursor unchanged")
	}
	require.Equal(t, 0, x.gh.QuotaUsed())
	for _, r := range x.gh.Requests() {
		require.Equal(t, 304, r.Status, "%s %s", r.Method, r.Path)
	}
	require.Len(t, x.gh.Requests(), 5*5, "pull, reviews, check runs, status, comments")
	after := x.p.Client().Stats()
	require.Equal(t, before.QuotaUsed, after.QuotaUsed)
	require.Equal(t, int64(25), after.NotModified-before.NotModified)
	st := x.status()
	require.True(t, st.OK)
	require.Equal(t, after.RateRemaining, st.Extra["quotaRemaining"])
	x.gh.Verify(t)
}
