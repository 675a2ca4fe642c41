package github

import (
	"encoding/json"
	"fmt"

	"github.com/agentproto/sentinel"
)

// reviewCommentData is the data projection of a pull_request_review_comment
// event: where the comment sits (path, line, side, the diff hunk), what it
// says, and the trust facts (the author is the comment's).
type reviewCommentData struct {
	Action       string `json:"action"`
	Repo         string `json:"repo"`
	Number       int    `json:"number"`
	CommentID    int64  `json:"commentId"`
	ReviewID     int64  `json:"reviewId,omitempty"`
	InReplyTo    int64  `json:"inReplyTo,omitempty"`
	Path         string `json:"path"`
	Line         *int   `json:"line"`
	StartLine    *int   `json:"startLine,omitempty"`
	OriginalLine *int   `json:"originalLine,omitempty"`
	Side         string `json:"side,omitempty"`
	CommitID     string `json:"commitId,omitempty"`
	DiffHunk     string `json:"diffHunk,omitempty"`
	Body         string `json:"body"`
	URL          string `json:"url,omitempty"`
	whTrust
}

// reviewCommentOf is the data of a review comment event of pull request
// number of repo (t: the trust facts).
func reviewCommentOf(action, repo string, number int, ic InlineComment, t whTrust) reviewCommentData {
	return reviewCommentData{
		Action: action, Repo: repo, Number: number, CommentID: ic.CommentID, ReviewID: ic.ReviewID, InReplyTo: ic.InReplyTo,
		Path: ic.Path, Line: ic.Line, StartLine: ic.StartLine, OriginalLine: ic.OriginalLine, Side: ic.Side,
		CommitID: ic.CommitID, DiffHunk: ic.DiffHunk, Body: ic.Body, URL: ic.URL, whTrust: t,
	}
}

// normalizeReviewComment: subject the PR, never terminal; the comment's
// author is the author of the trust facts.
func normalizeReviewComment(c *whContext, body []byte) (sentinel.Event, error) {
	var p whReviewCommentEvent
	if err := json.Unmarshal(body, &p); err != nil || p.Comment == nil {
		return sentinel.Event{}, whErr(ReasonInvalidPayload)
	}
	if p.PullRequest == nil || p.PullRequest.Number <= 0 {
		return sentinel.Event{}, whErr(ReasonMissingPullRequestNumber)
	}
	ref := c.repo
	ref.Number = p.PullRequest.Number
	cm := p.Comment
	t := c.trust(asWhUser(cm.User), cm.AuthorAssociation)
	ic := cm.Inline(MaxCommentBody, MaxCommentHunk)
	data := reviewCommentOf(c.action, ref.FullName(), ref.Number, ic, t)
	where := whOneLine(ic.Path, 200)
	if ic.Line != nil {
		where += fmt.Sprintf(":%d", *ic.Line)
	}
	summary := fmt.Sprintf("Review comment %s on %s %s by %s", c.action, whTarget(ref), where, t.actorName())
	if c.action == "created" {
		summary = fmt.Sprintf("New review comment on %s %s by %s", whTarget(ref), where, t.actorName())
	}
	return c.build(ref, nil, summary, false, data), nil
}

// reviewThreadData is the data projection of a pull_request_review_thread
// event: the thread's place and first comment, and how many it holds.
type reviewThreadData struct {
	Action   string `json:"action"`
	Repo     string `json:"repo"`
	Number   int    `json:"number"`
	ThreadID string `json:"threadId,omitempty"`
	Path     string `json:"path,omitempty"`
	Line     *int   `json:"line"`
	Comments int    `json:"comments"`
	// First is the thread's first comment (its author is the trust facts').
	First *InlineComment `json:"first,omitempty"`
	URL   string         `json:"url,omitempty"`
	whTrust
}

// normalizeReviewThread: subject the PR, never terminal; the actor is who
// resolved or unresolved the thread, the author the thread's first
// commenter.
func normalizeReviewThread(c *whContext, body []byte) (sentinel.Event, error) {
	var p whReviewThreadEvent
	if err := json.Unmarshal(body, &p); err != nil || p.Thread == nil {
		return sentinel.Event{}, whErr(ReasonInvalidPayload)
	}
	if p.PullRequest == nil || p.PullRequest.Number <= 0 {
		return sentinel.Event{}, whErr(ReasonMissingPullRequestNumber)
	}
	ref := c.repo
	ref.Number = p.PullRequest.Number
	data := reviewThreadData{Action: c.action, Repo: ref.FullName(), Number: ref.Number,
		ThreadID: whOneLine(p.Thread.NodeID, 100), Comments: len(p.Thread.Comments)}
	var t whTrust
	where := ""
	if len(p.Thread.Comments) > 0 {
		first := &p.Thread.Comments[0]
		ic := first.Inline(reviewCommentBody, reviewCommentHunk)
		data.First, data.Path, data.Line, data.URL = &ic, ic.Path, ic.Line, ic.URL
		t = c.trust(asWhUser(first.User), first.AuthorAssociation)
		where = " on " + whOneLine(ic.Path, 200)
		if ic.Line != nil {
			where += fmt.Sprintf(":%d", *ic.Line)
		}
	} else {
		t = c.trust(nil, "")
	}
	data.whTrust = t
	summary := fmt.Sprintf("Review thread%s %s on %s by %s", where, c.action, whTarget(ref), t.actorName())
	return c.build(ref, nil, summary, false, data), nil
}

// asWhUser converts a REST account for the trust facts.
func asWhUser(u *User) *whUser {
	if u == nil {
		return nil
	}
	return &whUser{Login: u.Login, Type: u.Type}
}

// ReviewCommentEventData is the data of a review comment event built from
// REST (local-gh's poll): the projection the webhook's
// pull_request_review_comment events carry, with the comment's author as
// the actor (a poll does not see who acted; for a new comment it is its
// author).
func ReviewCommentEventData(action, repo string, number int, cm *ReviewComment) any {
	c := &whContext{sender: asWhUser(cm.User)}
	return reviewCommentOf(action, repo, number, cm.Inline(MaxCommentBody, MaxCommentHunk), c.trust(asWhUser(cm.User), cm.AuthorAssociation))
}
