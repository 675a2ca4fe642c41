package localgh_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/github"
	"github.com/agentproto/sentinel/providers/github/githubtest"
)

// watchTypes creates the sentinel for subject with types.
func (x *harness) watchTypes(subject string, until string, types ...string) {
	x.t.Helper()
	h, err := x.p.Create(context.Background(), providers.CreateRequest{SentinelID: "sen_x", Spec: sentinel.Spec{
		Match: []sentinel.Clause{{Subject: subject, Types: types}}, Until: sentinel.Until{Kind: until},
	}})
	require.NoError(x.t, err)
	x.h = h
}

// TestForkPRChecksFromTheHeadRepository: a fork's PR shows checks the
// base repository runs on its head and checks reported in the fork; the
// poll reads both, folds them into one rollup, and a quiet poll stays all
// 304s.
func TestForkPRChecksFromTheHeadRepository(t *testing.T) {
	x := newHarness(t, nil)
	head := githubtest.SHA("fork head")
	x.gh.OpenPR(repoName, githubtest.PR{Number: 7, Head: head, HeadRepo: "contrib/widgets"})
	x.watch(prSubject, sentinel.UntilSubjectTerminal)
	require.Empty(t, x.poll())

	x.gh.SetCheckRun(repoName, head, "build", "completed", "success")
	x.gh.SetCheckRun("contrib/widgets", head, "lint", "completed", "failure")
	x.gh.SetStatus("contrib/widgets", head, "ci/external", "success")
	x.gh.SetCheckRun("contrib/widgets", head, "build", "completed", "success") // same name as the base's
	evs := x.poll()
	require.Equal(t, []string{"github.check_suite.completed"}, types(evs))
	d := data(t, evs[0])
	require.Equal(t, "failure", d["conclusion"], "worst of both repositories")
	var names []string
	for _, c := range d["checks"].([]any) {
		names = append(names, c.(map[string]any)["name"].(string))
	}
	require.Equal(t, []string{"build", "build (contrib/widgets)", "ci/external", "lint"}, names)

	x.gh.ResetLog()
	require.Empty(t, x.poll())
	require.Zero(t, x.gh.QuotaUsed(), "a quiet fork PR costs no quota")
	require.Positive(t, x.gh.Count(http.MethodGet, "/repos/contrib/widgets/commits/"+head))

	// A repository watch reads the fork's checks of its open PRs too.
	y := newHarness(t, nil)
	y.gh.OpenPR(repoName, githubtest.PR{Number: 8, Head: head, HeadRepo: "contrib/widgets"})
	y.watch("github:"+repoName, sentinel.UntilNever)
	require.Empty(t, y.poll())
	y.gh.PushHead(repoName, 8, githubtest.SHA("fork head 2"))
	y.gh.SetCheckRun("contrib/widgets", githubtest.SHA("fork head 2"), "lint", "completed", "failure")
	evs = y.poll()
	require.Equal(t, []string{"github.check_suite.completed"}, types(evs))
	require.Equal(t, []any{"lint"}, data(t, evs[0])["failed"])
	x.gh.Verify(t)
	y.gh.Verify(t)
}

// TestReviewInlineCommentsLikeTheWebhook: a new review carries its inline
// comments; with the opt-in type each comment is also a
// pull_request_review_comment.created event whose data is what the
// webhook provider makes of GitHub's own review comment object; a reply
// (its own review) is seen the same way. A default watch gets the review
// with its comments and no comment events.
func TestReviewInlineCommentsLikeTheWebhook(t *testing.T) {
	x := newHarness(t, nil)
	x.gh.OpenPR(repoName, githubtest.PR{Number: 7})
	x.watchTypes(prSubject, sentinel.UntilSubjectTerminal, "github.pull_request_review.submitted", "github.pull_request_review_comment.created")
	require.Equal(t, "review_comments", x.h.StateString("optIn"))
	require.Empty(t, x.poll())

	rid := x.gh.AddReview(repoName, 7, githubtest.Review{User: "copilot-pull-request-reviewer[bot]", State: "commented", Association: "NONE",
		Comments: []githubtest.InlineComment{{Path: "main.go", Line: 40, Body: "This leaks the file handle.\nClose it."}, {Path: "util.go", Line: 3, Body: "Unused."}}})
	evs := x.poll()
	require.Equal(t, []string{"github.pull_request_review.submitted", "github.pull_request_review_comment.created", "github.pull_request_review_comment.created"}, types(evs))
	rv := data(t, evs[0])
	require.EqualValues(t, rid, rv["reviewId"])
	require.EqualValues(t, 2, rv["commentsTotal"])
	require.Equal(t, "This leaks the file handle.\nClose it.", rv["comments"].([]any)[0].(map[string]any)["body"])
	require.Equal(t, true, rv["actorIsBot"])
	require.Contains(t, evs[0].Summary, "(2 inline comments)")

	// The webhook's view of the same comment: GitHub's review comment
	// object (REST and webhook carry the same) in a real payload.
	resp, err := x.p.Client().Get(context.Background(), "/repos/acme/widgets/pulls/7/comments")
	require.NoError(t, err)
	var rest []json.RawMessage
	require.NoError(t, json.Unmarshal(resp.Body, &rest))
	raw, err := os.ReadFile(filepath.Join("testdata", "pull_request_review_comment.json"))
	require.NoError(t, err)
	var payload map[string]any
	require.NoError(t, json.Unmarshal(raw, &payload))
	payload["comment"] = rest[0]
	payload["pull_request"].(map[string]any)["number"] = 7
	payload["repository"] = map[string]any{"full_name": repoName}
	payload["sender"] = map[string]any{"login": "copilot-pull-request-reviewer[bot]", "type": "Bot"}
	body, err := json.Marshal(payload)
	require.NoError(t, err)
	wh, err := github.NormalizeWebhook(github.WebhookPullRequestReviewComment, "d-1", body, "", time.Now())
	require.NoError(t, err)
	require.Equal(t, wh[0].Type, evs[1].Type)
	require.Equal(t, wh[0].Subject, evs[1].Subject)
	require.Equal(t, data(t, wh[0]), data(t, evs[1]), "both providers give the same event")

	x.gh.AddReply(repoName, 7, int64(rv["comments"].([]any)[0].(map[string]any)["commentId"].(float64)), "alice", "Fixed.")
	evs = x.poll()
	require.Equal(t, []string{"github.pull_request_review.submitted", "github.pull_request_review_comment.created"}, types(evs))
	require.Equal(t, "Fixed.", data(t, evs[1])["body"])
	require.NotZero(t, data(t, evs[1])["inReplyTo"])
	require.Empty(t, x.poll())

	// A default watch: the review with its comments, no comment events,
	// no other request.
	y := newHarness(t, nil)
	y.gh.OpenPR(repoName, githubtest.PR{Number: 7})
	y.watch(prSubject, sentinel.UntilSubjectTerminal)
	require.Empty(t, y.poll())
	y.gh.AddReview(repoName, 7, githubtest.Review{User: "bob", State: "changes_requested", Body: "",
		Comments: []githubtest.InlineComment{{Path: "a.go", Line: 1, Body: "No."}}})
	evs = y.poll()
	require.Equal(t, []string{"github.pull_request_review.submitted"}, types(evs))
	require.EqualValues(t, 1, data(t, evs[0])["commentsTotal"])
	x.gh.Verify(t)
	y.gh.Verify(t)
}

// TestWorkflowJobWithItsFailedStep: with the opt-in type, a GitHub Actions
// job that completed is a workflow_job.completed event, a failed one with
// the step that failed (read from the job); a default watch makes no job
// request.
func TestWorkflowJobWithItsFailedStep(t *testing.T) {
	x := newHarness(t, nil)
	x.gh.OpenPR(repoName, githubtest.PR{Number: 7})
	head := x.gh.Head(repoName, 7)
	x.watchTypes(prSubject, sentinel.UntilSubjectTerminal, "github.check_suite.completed", "github.workflow_job.*")
	require.Empty(t, x.poll())
	x.gh.SetCheckRun(repoName, head, "lint", "completed", "failure",
		githubtest.Step{Name: "Set up job", Conclusion: "success"}, githubtest.Step{Name: "golangci-lint", Conclusion: "failure"})
	x.gh.SetCheckRun(repoName, head, "test", "completed", "success")
	evs := x.poll()
	require.Equal(t, []string{"github.check_suite.completed", "github.workflow_job.completed", "github.workflow_job.completed"}, types(evs))
	lint := data(t, evs[1])
	require.Equal(t, "lint", lint["name"])
	require.Equal(t, "golangci-lint", lint["failedStep"])
	require.Equal(t, "CI", lint["workflowName"])
	require.Equal(t, `Job "lint" (CI) failed at step "golangci-lint" for acme/widgets#7`, evs[1].Summary)
	require.Equal(t, "success", data(t, evs[2])["conclusion"])
	require.Equal(t, 1, x.gh.Count(http.MethodGet, "/repos/acme/widgets/actions/jobs/"), "only the failed job is read")

	y := newHarness(t, nil)
	y.gh.OpenPR(repoName, githubtest.PR{Number: 7})
	y.watch(prSubject, sentinel.UntilSubjectTerminal)
	require.Empty(t, y.poll())
	y.gh.SetCheckRun(repoName, y.gh.Head(repoName, 7), "lint", "completed", "failure", githubtest.Step{Name: "x", Conclusion: "failure"})
	require.Equal(t, []string{"github.check_suite.completed"}, types(y.poll()))
	require.Zero(t, y.gh.Count(http.MethodGet, "/repos/acme/widgets/actions/jobs/"))
	x.gh.Verify(t)
	y.gh.Verify(t)
}

// TestGhostIsNobodysMaintainer: a deleted user's review is labelled ghost
// and never reported with the association GitHub kept for it.
func TestGhostIsNobodysMaintainer(t *testing.T) {
	x := newHarness(t, nil)
	x.gh.OpenPR(repoName, githubtest.PR{Number: 7})
	x.watch(prSubject, sentinel.UntilSubjectTerminal)
	require.Empty(t, x.poll())
	x.gh.AddReview(repoName, 7, githubtest.Review{User: "ghost", State: "approved", Association: "OWNER"})
	evs := x.poll()
	d := data(t, evs[0])
	require.Equal(t, "ghost", d["actor"])
	require.Equal(t, true, d["actorIsGhost"])
	require.Equal(t, true, d["authorIsGhost"])
	require.Equal(t, "NONE", d["authorAssociation"])
	require.False(t, evs[0].SelfCaused)
}
