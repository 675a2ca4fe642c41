package github

import (
	"strings"
	"time"
	"unicode/utf8"
)

// ReviewComment is an inline comment on a line of a pull request's diff,
// as REST lists them (GET /repos/o/r/pulls/N/comments and
// .../pulls/N/reviews/ID/comments) and as the pull_request_review_comment
// webhook carries it: the same object in both.
type ReviewComment struct {
	ID                int64     `json:"id"`
	ReviewID          int64     `json:"pull_request_review_id"`
	InReplyTo         int64     `json:"in_reply_to_id"`
	User              *User     `json:"user"`
	Body              string    `json:"body"`
	Path              string    `json:"path"`
	Line              *int      `json:"line"`
	StartLine         *int      `json:"start_line"`
	OriginalLine      *int      `json:"original_line"`
	Side              string    `json:"side"`
	DiffHunk          string    `json:"diff_hunk"`
	CommitID          string    `json:"commit_id"`
	HTMLURL           string    `json:"html_url"`
	AuthorAssociation string    `json:"author_association"`
	CreatedAt         time.Time `json:"created_at"`
	UpdatedAt         time.Time `json:"updated_at"`
}

// Bounds of the inline comment facts events carry (their data is capped
// at 32 KiB, and an inbox message keeps 16 KiB of it).
const (
	// MaxCommentBody bounds the body of a review comment event.
	MaxCommentBody = 4096
	// MaxCommentHunk bounds the diff hunk of a review comment event.
	MaxCommentHunk = 2048
	// MaxReviewComments is how many inline comments a review event carries.
	MaxReviewComments = 10
	// maxReviewCommentsBytes bounds the bodies, hunks and paths of the comments a
	// review event carries, together.
	maxReviewCommentsBytes = 8 << 10
	// reviewCommentBody and reviewCommentHunk bound each one in a review.
	reviewCommentBody = 1500
	reviewCommentHunk = 400
)

// InlineComment is the projection of one inline comment: where (path,
// line, side; line null when the comment is outdated, originalLine the
// line it was written on), what (body, the diff hunk it sits on) and by
// whom. Both GitHub providers build it the same way.
type InlineComment struct {
	CommentID         int64  `json:"commentId"`
	ReviewID          int64  `json:"reviewId,omitempty"`
	InReplyTo         int64  `json:"inReplyTo,omitempty"`
	Path              string `json:"path"`
	Line              *int   `json:"line"`
	StartLine         *int   `json:"startLine,omitempty"`
	OriginalLine      *int   `json:"originalLine,omitempty"`
	Side              string `json:"side,omitempty"`
	CommitID          string `json:"commitId,omitempty"`
	DiffHunk          string `json:"diffHunk,omitempty"`
	Body              string `json:"body"`
	URL               string `json:"url,omitempty"`
	Author            string `json:"author,omitempty"`
	AuthorIsBot       bool   `json:"authorIsBot,omitempty"`
	AuthorIsGhost     bool   `json:"authorIsGhost,omitempty"`
	AuthorAssociation string `json:"authorAssociation,omitempty"`
}

// Inline projects a review comment with its body and hunk capped at the
// given byte counts.
func (c *ReviewComment) Inline(maxBody, maxHunk int) InlineComment {
	login := LoginOf(c.User)
	return InlineComment{
		CommentID: c.ID, ReviewID: c.ReviewID, InReplyTo: c.InReplyTo,
		Path: CapText(c.Path, 1024), Line: c.Line, StartLine: c.StartLine, OriginalLine: c.OriginalLine,
		Side: CapText(c.Side, 10), CommitID: CapText(c.CommitID, 64),
		DiffHunk: CapText(c.DiffHunk, maxHunk), Body: CapText(c.Body, maxBody), URL: CapText(c.HTMLURL, 1024),
		Author: CapText(login, 100), AuthorIsBot: c.User.IsBot(), AuthorIsGhost: c.User.IsGhost(),
		AuthorAssociation: CapText(TrustedAssociation(login, c.AuthorAssociation), 40),
	}
}

// ReviewCommentsFacts is what a pull_request_review.submitted event says
// of its inline comments: up to MaxReviewComments of them, oldest first,
// each capped, within a byte budget for them all; Total counts them all
// and Clipped those left out, so one event tells the whole review and
// says when it could not.
type ReviewCommentsFacts struct {
	Comments []InlineComment `json:"comments"`
	Total    int             `json:"commentsTotal"`
	Clipped  int             `json:"commentsClipped"`
}

// ReviewCommentsOf builds the facts of a review's comments (given oldest
// first; those of other reviews are skipped when reviewID > 0).
func ReviewCommentsOf(list []ReviewComment, reviewID int64) ReviewCommentsFacts {
	f := ReviewCommentsFacts{Comments: []InlineComment{}}
	budget := maxReviewCommentsBytes
	for i := range list {
		c := &list[i]
		if reviewID > 0 && c.ReviewID != reviewID {
			continue
		}
		f.Total++
		if len(f.Comments) == MaxReviewComments || budget <= 0 {
			f.Clipped++
			continue
		}
		ic := c.Inline(min(reviewCommentBody, budget), min(reviewCommentHunk, budget))
		ic.ReviewID = 0 // the review's own id is the event's
		budget -= len(ic.Body) + len(ic.DiffHunk) + len(ic.Path)
		f.Comments = append(f.Comments, ic)
	}
	return f
}

// CapText bounds free text kept in data at n bytes of valid UTF-8, ending
// in "…" when cut; newlines and the rest of the text are kept as GitHub
// sent them (data is read as untrusted text, never as a summary line).
func CapText(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	s = s[:max(n, 0)]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "…"
}
