package github

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
)

// tableLookup answers from tables; the webhook provider's lookup (REST,
// cached) is tested against the fake GitHub in providers/webhook.
type tableLookup struct {
	mu       sync.Mutex
	heads    map[string][]int // "repo|headRepo|sha"
	observed []string
	comments map[int64][]ReviewComment
	err      error
	asked    int
}

func (l *tableLookup) PullsForHead(_ context.Context, repo sentinel.GitHubRef, headRepo, sha string) ([]int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.asked++
	if l.err != nil {
		return nil, l.err
	}
	return l.heads[repo.FullName()+"|"+headRepo+"|"+sha], nil
}

func (l *tableLookup) ObserveHead(repo sentinel.GitHubRef, n int, headRepo, sha string, open bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.observed = append(l.observed, strings.Join([]string{repo.FullName(), headRepo, sha}, "|"))
	_ = n
	_ = open
}

func (l *tableLookup) ReviewComments(_ context.Context, _ sentinel.GitHubRef, _ int, id int64) ([]ReviewComment, error) {
	if l.err != nil {
		return nil, l.err
	}
	return l.comments[id], nil
}

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "webhooks", name))
	require.NoError(t, err)
	return b
}

func normalizeWith(t *testing.T, l WebhookLookup, event, name string) ([]sentinel.Event, error) {
	t.Helper()
	return NormalizeWebhookWith(context.Background(), event, "d-1", fixture(t, name), WebhookOptions{Now: whGoldenNow, Lookup: l})
}

// TestForkCIMapsToThePRByHead: a fork's check suite, workflow run, job and
// commit status list no PR; the lookup names the open PRs whose head is the
// commit (for a run, from its head repository), and the event goes to them.
func TestForkCIMapsToThePRByHead(t *testing.T) {
	const sha = "ec26c3e57ca3a959ca5aad62de7213c562f8c821"
	l := &tableLookup{heads: map[string][]int{
		"Codertocat/Hello-World||" + sha:                                   {2},
		"Codertocat/Hello-World|contributor/Hello-World|" + sha:            {2, 5},
		"Codertocat/Hello-World||3484a3fb816e0859fd6e1cea078d76385ff50625": {9},
	}}
	evs, err := normalizeWith(t, l, WebhookCheckSuite, "check_suite/completed-fork.json")
	require.NoError(t, err)
	require.Equal(t, "github:Codertocat/Hello-World#2", evs[0].Subject)

	// workflow_run completed-1's head differs: use the fork fixture's.
	var run struct {
		WorkflowRun struct {
			HeadSHA string `json:"head_sha"`
		} `json:"workflow_run"`
	}
	require.NoError(t, json.Unmarshal(fixture(t, "workflow_run/completed-fork.json"), &run))
	l.heads["Codertocat/Hello-World|contributor/Hello-World|"+run.WorkflowRun.HeadSHA] = []int{2, 5}
	evs, err = normalizeWith(t, l, WebhookWorkflowRun, "workflow_run/completed-fork.json")
	require.NoError(t, err)
	require.Equal(t, "github:Codertocat/Hello-World#2", evs[0].Subject)
	require.Equal(t, []string{"github:Codertocat/Hello-World#2", "github:Codertocat/Hello-World#5", "github:Codertocat/Hello-World", "github:Codertocat"}, evs[0].Subjects)
	require.Contains(t, string(evs[0].Data), `"head_repo":"contributor/Hello-World"`)

	evs, err = normalizeWith(t, l, WebhookWorkflowJob, "workflow_job/completed.failure.with-organization.json")
	require.NoError(t, err)
	require.Equal(t, "github:Codertocat/Hello-World#9", evs[0].Subject)

	// A status with no PR known for its commit stays at the repository.
	evs, err = normalizeWith(t, l, WebhookStatus, "status/failure-jenkins.json")
	require.NoError(t, err)
	require.Equal(t, "github:Codertocat/Hello-World", evs[0].Subject)
	require.Equal(t, "github.check_suite.completed", evs[0].Type)

	// A pull_request event tells the lookup its head.
	_, err = normalizeWith(t, l, WebhookPullRequest, "pull_request/synchronize-fork.json")
	require.NoError(t, err)
	require.Equal(t, []string{"Codertocat/Hello-World|contributor/Hello-World|" + sha}, l.observed)
}

// TestMergeQueueCIMapsToThePR: CI on a merge queue branch goes to the PR
// the branch names, without asking the lookup.
func TestMergeQueueCIMapsToThePR(t *testing.T) {
	l := &tableLookup{}
	evs, err := normalizeWith(t, l, WebhookCheckSuite, "check_suite/completed-merge-queue-failure.json")
	require.NoError(t, err)
	require.Equal(t, "github:Codertocat/Hello-World#2", evs[0].Subject)
	require.Zero(t, l.asked)
}

// TestForkLookupFailure: a lookup GitHub may answer later is a
// LookupError (the delivery fails and is redelivered); one GitHub refuses
// for good leaves the event at the repository.
func TestForkLookupFailure(t *testing.T) {
	l := &tableLookup{err: &providers.Error{Reason: providers.ReasonServer, Retryable: true, Message: "HTTP 502"}}
	_, err := normalizeWith(t, l, WebhookCheckSuite, "check_suite/completed-fork.json")
	var le *LookupError
	require.ErrorAs(t, err, &le)
	l.err = &providers.Error{Reason: providers.ReasonForbidden, Message: "HTTP 403"}
	evs, err := normalizeWith(t, l, WebhookCheckSuite, "check_suite/completed-fork.json")
	require.NoError(t, err)
	require.Equal(t, "github:Codertocat/Hello-World", evs[0].Subject)
}

// TestReviewCarriesItsInlineComments: a submitted review carries its inline
// comments up to MaxReviewComments, counted when clipped; a lookup failure
// delivers the review marked commentsUnavailable.
func TestReviewCarriesItsInlineComments(t *testing.T) {
	line := 12
	var list []ReviewComment
	for i := range MaxReviewComments + 3 {
		list = append(list, ReviewComment{ID: int64(100 + i), ReviewID: 237895671, Path: "main.go", Line: &line,
			Body: "fix this\nplease", DiffHunk: "@@ -1 +1 @@", User: &User{Login: "alice"}, AuthorAssociation: "MEMBER"})
	}
	list = append(list, ReviewComment{ID: 999, ReviewID: 1, Body: "another review's"})
	l := &tableLookup{comments: map[int64][]ReviewComment{237895671: list}}
	evs, err := normalizeWith(t, l, WebhookPullRequestReview, "pull_request_review/submitted-1.json")
	require.NoError(t, err)
	var d struct {
		Comments []InlineComment `json:"comments"`
		Total    int             `json:"commentsTotal"`
		Clipped  int             `json:"commentsClipped"`
	}
	require.NoError(t, json.Unmarshal(evs[0].Data, &d))
	require.Len(t, d.Comments, MaxReviewComments)
	require.Equal(t, MaxReviewComments+3, d.Total)
	require.Equal(t, 3, d.Clipped)
	require.Equal(t, "fix this\nplease", d.Comments[0].Body)
	require.Equal(t, "main.go", d.Comments[0].Path)
	require.Equal(t, 12, *d.Comments[0].Line)
	require.Contains(t, evs[0].Summary, "(13 inline comments)")

	l.err = &providers.Error{Reason: providers.ReasonServer, Retryable: true}
	evs, err = normalizeWith(t, l, WebhookPullRequestReview, "pull_request_review/submitted-1.json")
	require.NoError(t, err, "the review is delivered without its comments rather than held back")
	require.Contains(t, string(evs[0].Data), `"commentsUnavailable":true`)
}

// TestReviewCommentsBudget: however long the comments, the review's data
// stays within the inbox's 16 KiB.
func TestReviewCommentsBudget(t *testing.T) {
	big := strings.Repeat("x", 20000)
	var list []ReviewComment
	for i := range 30 {
		list = append(list, ReviewComment{ID: int64(i + 1), Body: big, DiffHunk: big, Path: strings.Repeat("p", 5000)})
	}
	f := ReviewCommentsOf(list, 0)
	raw, err := json.Marshal(f)
	require.NoError(t, err)
	require.Less(t, len(raw), 16<<10)
	require.Equal(t, 30, f.Total)
	require.Equal(t, 30-len(f.Comments), f.Clipped)
}

// TestHookEventsFor: the spec's five always; an opt-in type adds its event;
// the default set adds status (folded into check_suite.completed).
func TestHookEventsFor(t *testing.T) {
	require.Equal(t, SpecHookEvents(), HookEventsFor(nil))
	require.Equal(t, append(SpecHookEvents(), WebhookStatus), HookEventsFor(sentinel.DefaultPRTypes()))
	require.Equal(t, append(SpecHookEvents(), WebhookMergeGroup, WebhookPullRequestReviewThread),
		HookEventsFor([]string{"github.merge_group.destroyed", "github.pull_request_review_thread.*"}))
	require.Equal(t, WebhookEvents(), HookEventsFor([]string{"*"}))
	require.Equal(t, SpecHookEvents(), HookEventsFor([]string{"github.pull_request.*"}))
}

// TestSpecDefaultTypesUnchanged pins the spec's default PR set (AIP-60,
// "Event types") and checks that no type the new events produce is in it.
func TestSpecDefaultTypesUnchanged(t *testing.T) {
	require.Equal(t, []string{"github.check_suite.completed", "github.workflow_run.completed", "github.pull_request_review.submitted",
		"github.pull_request.closed", "github.pull_request.synchronize", "github.issue_comment.created"}, sentinel.DefaultPRTypes())
	for _, e := range []string{WebhookMergeGroup, WebhookPullRequestReviewComment, WebhookPullRequestReviewThread, WebhookWorkflowJob} {
		for _, typ := range WebhookTypes(e) {
			require.NotContains(t, sentinel.DefaultPRTypes(), typ)
		}
	}
	for _, typ := range []string{"github.pull_request.enqueued", "github.pull_request.dequeued"} {
		require.NotContains(t, sentinel.DefaultPRTypes(), typ)
	}
}
