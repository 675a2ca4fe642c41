package github

import (
	"context"
	"regexp"
	"strconv"
	"strings"

	"github.com/agentproto/sentinel"
)

// WebhookLookup answers, for the normalizer, what a webhook payload does
// not say. HeadLookup implements it over REST with a cache, for the
// webhook and github-app providers alike; implementations must be safe
// for concurrent use.
type WebhookLookup interface {
	// PullsForHead returns the numbers of repo's open pull requests whose
	// head commit is sha, from headRepo ("owner/name") when it is known
	// ("" when the payload does not say). A fork's PR is one of them:
	// GitHub sends its check_suite, workflow_run, workflow_job and status
	// events with no pull_requests.
	PullsForHead(ctx context.Context, repo sentinel.GitHubRef, headRepo, sha string) ([]int, error)
	// ObserveHead records what a pull_request event says of a PR's head
	// (open false once it closed), so the CI of its head maps to it
	// without asking GitHub.
	ObserveHead(repo sentinel.GitHubRef, number int, headRepo, sha string, open bool)
	// ReviewComments returns the inline comments of one review of a PR,
	// oldest first (at most one page: the caller keeps only a few).
	ReviewComments(ctx context.Context, repo sentinel.GitHubRef, number int, reviewID int64) ([]ReviewComment, error)
}

// shaRe is a full commit sha; only those are looked up.
var shaRe = regexp.MustCompile(`^[0-9a-f]{40}$`)

// ValidSHA reports whether s is a full 40-hex commit sha.
func ValidSHA(s string) bool { return shaRe.MatchString(s) }

// mergeQueueRe is the branch GitHub's merge queue builds a group on:
// gh-readonly-queue/<base branch>/pr-<number>-<sha of the PR's head>.
var mergeQueueRe = regexp.MustCompile(`^(?:refs/heads/)?gh-readonly-queue/(.+)/pr-([1-9][0-9]{0,9})-([0-9a-f]{40})$`)

// MergeQueuePR parses a merge queue branch (with or without refs/heads/)
// into the base branch it queues for and the PR number; ok is false for
// any other branch.
func MergeQueuePR(ref string) (base string, number int, ok bool) {
	m := mergeQueueRe.FindStringSubmatch(ref)
	if m == nil {
		return "", 0, false
	}
	n, err := strconv.Atoi(m[2])
	if err != nil || n <= 0 {
		return "", 0, false
	}
	return m[1], n, true
}

// branchName strips refs/heads/ from a ref.
func branchName(ref string) string { return strings.TrimPrefix(ref, "refs/heads/") }
