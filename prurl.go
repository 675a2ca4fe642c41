package sentinel

import (
	"regexp"
	"strconv"
)

// prURLRe accepts an optional scheme, github.com (or www.github.com), then
// /<owner>/<name>/pull/<n>, then an optional tail starting with / ? or #.
var prURLRe = regexp.MustCompile(`^(?:https?://)?(?:www\.)?github\.com/([A-Za-z0-9_.-]+)/([A-Za-z0-9_.-]+)/pull/([1-9][0-9]{0,9})(?:[/?#].*)?$`)

// ParsePRURL parses a GitHub pull request URL into its reference. Failure is
// an *Error with code invalid_pr_url; an owner or repository of "." or ".."
// (a path segment, never a GitHub name) is refused too.
func ParsePRURL(raw string) (GitHubRef, error) {
	m := prURLRe.FindStringSubmatch(raw)
	if m == nil {
		return GitHubRef{}, Errorf(CodeInvalidPRURL, "%q is not a GitHub pull request URL (https://github.com/<owner>/<repo>/pull/<number>)", raw)
	}
	if IsDotSegment(m[1]) || IsDotSegment(m[2]) {
		return GitHubRef{}, Errorf(CodeInvalidPRURL, "%q names a path segment (\".\" or \"..\") as owner or repository, not a GitHub name", raw)
	}
	n, err := strconv.Atoi(m[3])
	if err != nil || n < 1 {
		return GitHubRef{}, Errorf(CodeInvalidPRURL, "%q has an invalid pull request number", raw)
	}
	return GitHubRef{Owner: m[1], Repo: m[2], Number: n}, nil
}

// DefaultPRTypes is the default event-type set for a GitHub pull request
// subject, in the spec's order. check_run.* is deliberately absent.
func DefaultPRTypes() []string {
	return []string{
		"github.check_suite.completed",
		"github.workflow_run.completed",
		"github.pull_request_review.submitted",
		"github.pull_request.closed",
		"github.pull_request.synchronize",
		"github.issue_comment.created",
	}
}

// DefaultRepoTypes is the default event-type set of a repository-scope
// local-gh watch: verdict-level, no synchronize and no comments.
func DefaultRepoTypes() []string {
	return []string{
		"github.pull_request.opened",
		"github.pull_request.ready_for_review",
		"github.check_suite.completed",
		"github.pull_request_review.submitted",
		"github.pull_request.closed",
	}
}
