package github

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentproto/sentinel"
)

// prData is the data projection of a pull_request event. HeadRepo is the
// head's repository when it is another one (a fork's PR); Reason is why a
// PR left the merge queue (dequeued).
type prData struct {
	Action   string `json:"action"`
	Merged   bool   `json:"merged"`
	Repo     string `json:"repo"`
	Number   int    `json:"number"`
	Title    string `json:"title"`
	URL      string `json:"url"`
	HeadSHA  string `json:"head_sha"`
	HeadRepo string `json:"head_repo,omitempty"`
	Reason   string `json:"reason,omitempty"`
	whTrust
}

// normalizePullRequest: subject the PR, terminal on closed; "merged by" and
// "closed by" name the sender, who did it, not the PR's author. A PR that
// enters or leaves the merge queue (enqueued; dequeued, with its reason)
// is not closed: only a closed event with merged true reports a merge. The
// head it names is told to the lookup, so the CI of a fork's head maps to
// the PR.
func normalizePullRequest(c *whContext, body []byte) (sentinel.Event, error) {
	var p whPullRequestEvent
	if err := json.Unmarshal(body, &p); err != nil {
		return sentinel.Event{}, whErr(ReasonInvalidPayload)
	}
	pr := p.PullRequest
	if pr == nil {
		pr = &whPull{}
	}
	n := pr.Number
	if n <= 0 {
		n = p.Number
	}
	if n <= 0 {
		return sentinel.Event{}, whErr(ReasonMissingPullRequestNumber)
	}
	ref := c.repo
	ref.Number = n
	merged := pr.Merged != nil && *pr.Merged
	t := c.trust(pr.User, pr.AuthorAssociation)
	reason := whOneLine(p.Reason, 100)
	var summary string
	switch {
	case c.action == "closed" && merged:
		summary = fmt.Sprintf("PR %s merged by %s", whTarget(ref), t.actorName())
	case c.action == "closed":
		summary = fmt.Sprintf("PR %s closed by %s", whTarget(ref), t.actorName())
	case c.action == "enqueued":
		summary = fmt.Sprintf("PR %s added to the merge queue by %s", whTarget(ref), t.actorName())
	case c.action == "dequeued" && reason != "":
		summary = fmt.Sprintf("PR %s removed from the merge queue (%s), not merged", whTarget(ref), reason)
	case c.action == "dequeued":
		summary = fmt.Sprintf("PR %s removed from the merge queue, not merged", whTarget(ref))
	default:
		summary = fmt.Sprintf("PR %s %s by %s", whTarget(ref), c.action, t.actorName())
	}
	headRepo := pr.headRepo()
	if strings.EqualFold(headRepo, ref.FullName()) {
		headRepo = ""
	}
	data := prData{
		Action: c.action, Merged: merged, Repo: ref.FullName(), Number: n,
		Title: whCapText(pr.Title), URL: whCapText(pr.HTMLURL), HeadSHA: whCapText(pr.Head.SHA),
		HeadRepo: whCapText(headRepo), Reason: reason, whTrust: t,
	}
	if c.lookup != nil && ValidSHA(pr.Head.SHA) {
		c.lookup.ObserveHead(c.repo, n, pr.headRepo(), pr.Head.SHA, c.action != "closed" && pr.State != "closed")
	}
	return c.build(ref, nil, summary, c.action == "closed", data), nil
}

// reviewData is the data projection of a pull_request_review event: the
// review's state and body and, for a submitted review, its inline comments
// (ReviewCommentsFacts: a review's body is often empty while its comments
// say everything), or CommentsUnavailable when GitHub could not list them.
type reviewData struct {
	Action   string  `json:"action"`
	State    *string `json:"state"`
	Repo     string  `json:"repo"`
	Number   int     `json:"number"`
	URL      string  `json:"url,omitempty"`
	ReviewID int64   `json:"reviewId,omitempty"`
	CommitID string  `json:"commitId,omitempty"`
	Body     string  `json:"body"`
	*ReviewCommentsFacts
	CommentsUnavailable bool `json:"commentsUnavailable,omitempty"`
	whTrust
}

// normalizePullRequestReview: subject the PR, never terminal. A submitted
// review carries its inline comments when the lookup can list them; when
// it cannot (GitHub failing), the review is delivered now, marked
// commentsUnavailable, rather than held back.
func normalizePullRequestReview(c *whContext, body []byte) (sentinel.Event, error) {
	var p whReviewEvent
	if err := json.Unmarshal(body, &p); err != nil {
		return sentinel.Event{}, whErr(ReasonInvalidPayload)
	}
	if p.PullRequest == nil || p.PullRequest.Number <= 0 {
		return sentinel.Event{}, whErr(ReasonMissingPullRequestNumber)
	}
	ref := c.repo
	ref.Number = p.PullRequest.Number
	data := reviewData{Action: c.action, Repo: ref.FullName(), Number: ref.Number}
	state := "unknown"
	var t whTrust
	if r := p.Review; r != nil {
		if r.State != "" {
			s := whOneLine(r.State, 40)
			state, data.State = s, &s
		}
		data.URL = whCapText(r.HTMLURL)
		data.ReviewID = max(r.ID, 0)
		data.CommitID = whOneLine(r.CommitID, 64)
		if r.Body != nil {
			data.Body = CapText(*r.Body, MaxCommentBody)
		}
		t = c.trust(r.User, r.AuthorAssociation)
		if c.lookup != nil && c.action == "submitted" && r.ID > 0 {
			list, err := c.lookup.ReviewComments(c.ctx, c.repo, ref.Number, r.ID)
			if err != nil {
				data.CommentsUnavailable = true
			} else {
				f := ReviewCommentsOf(list, r.ID)
				data.ReviewCommentsFacts = &f
			}
		}
	} else {
		t = c.trust(nil, "")
	}
	data.whTrust = t
	summary := fmt.Sprintf("PR %s review %s by %s", whTarget(ref), state, t.actorName())
	if f := data.ReviewCommentsFacts; f != nil && f.Total > 0 {
		summary += fmt.Sprintf(" (%d inline comment%s)", f.Total, plural(f.Total))
	}
	return c.build(ref, nil, summary, false, data), nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// commentData is the data projection of an issue_comment event.
type commentData struct {
	Action        string `json:"action"`
	Repo          string `json:"repo"`
	Number        int    `json:"number"`
	URL           string `json:"url"`
	IsPullRequest bool   `json:"is_pull_request"`
	whTrust
}

// normalizeIssueComment: subject github:o/r#<issue number>, for plain
// issues too (PRs and issues share one number space).
func normalizeIssueComment(c *whContext, body []byte) (sentinel.Event, error) {
	var p whIssueCommentEvent
	if err := json.Unmarshal(body, &p); err != nil {
		return sentinel.Event{}, whErr(ReasonInvalidPayload)
	}
	if p.Issue == nil || p.Issue.Number <= 0 {
		return sentinel.Event{}, whErr(ReasonMissingIssueNumber)
	}
	ref := c.repo
	ref.Number = p.Issue.Number
	data := commentData{Action: c.action, Repo: ref.FullName(), Number: ref.Number, IsPullRequest: p.Issue.PullRequest != nil}
	var t whTrust
	if cm := p.Comment; cm != nil {
		data.URL = whCapText(cm.HTMLURL)
		t = c.trust(cm.User, cm.AuthorAssociation)
	} else {
		t = c.trust(nil, "")
	}
	data.whTrust = t
	summary := fmt.Sprintf("Comment %s on %s by %s", c.action, whTarget(ref), t.actorName())
	if c.action == "created" {
		summary = fmt.Sprintf("New comment on %s by %s", whTarget(ref), t.actorName())
	}
	return c.build(ref, nil, summary, false, data), nil
}

// prRef returns the subject ref for a list of PR numbers (the first one, the
// rest as extra subjects), or the repository when there are none.
func (c *whContext) prRef(numbers []int) (sentinel.GitHubRef, []int) {
	ref := c.repo
	if len(numbers) == 0 {
		return ref, nil
	}
	ref.Number = numbers[0]
	return ref, numbers[1:]
}

// target renders o/r#n, or o/r for a repository.
func whTarget(ref sentinel.GitHubRef) string {
	if ref.Number > 0 {
		return fmt.Sprintf("%s#%d", ref.FullName(), ref.Number)
	}
	return ref.FullName()
}

// whTargetBranch renders o/r#n, or "o/r (<branch>)" for a repository-level
// event with a branch.
func whTargetBranch(ref sentinel.GitHubRef, branch string) string {
	if ref.Number > 0 || branch == "" {
		return whTarget(ref)
	}
	return fmt.Sprintf("%s (%s)", ref.FullName(), whOneLine(branch, 100))
}

func whNonEmpty(s *string) *string {
	if s == nil || *s == "" {
		return nil
	}
	v := whOneLine(*s, 40)
	return &v
}

func whDeref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
