package localgh

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers/github"
)

// PR states in snapshots.
const (
	stateOpen   = "open"
	stateClosed = "closed"
	stateMerged = "merged"
)

// Event types local-gh emits.
const (
	typeClosed  = "github.pull_request.closed"
	typeReview  = "github.pull_request_review.submitted"
	typeSync    = "github.pull_request.synchronize"
	typeChecks  = "github.check_suite.completed"
	typeComment = "github.issue_comment.created"
	typeOpened  = "github.pull_request.opened"
	typeReady   = "github.pull_request.ready_for_review"
	// Opt-in types (not in the spec's default set), emitted only for a
	// sentinel whose types ask for them (handle state "optIn").
	typeReviewComment = "github.pull_request_review_comment.created"
	typeJob           = "github.workflow_job.completed"
	maxBodyBytes      = 4096
)

// eventID is "evt_" + the first 24 hex characters of sha256 of the parts
// joined with "|": the same diff inputs always mint the same id.
func eventID(parts ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(parts, "|")))
	return "evt_" + hex.EncodeToString(sum[:])[:24]
}

// trust is the trust projection every event's data carries, in the same
// shape as the webhook provider's: Actor is who caused the event ("" when
// the polled data does not say), ActorIsBot whether that is a bot,
// ActorIsGhost whether it is GitHub's stand-in for a deleted user; Author
// the login of whoever wrote the object (PR, review, comment), with the
// same labels, and AuthorAssociation that author's relation to the
// repository (GitHub's author_association; NONE for the ghost).
type trust struct {
	Actor             string
	ActorIsBot        bool
	Author            string
	AuthorBot         bool
	AuthorAssociation string
}

func isBotLogin(login string) bool { return github.IsBotAccount(login, "") }

// prTrust is the trust of an event caused by actor on the PR whose author
// the snapshot names.
func prTrust(s *snapshot, actor string, actorBot bool) trust {
	return trust{Actor: actor, ActorIsBot: actorBot || isBotLogin(actor), Author: s.Author, AuthorBot: isBotLogin(s.Author), AuthorAssociation: s.Assoc}
}

// emitter builds the events of one PR.
type emitter struct {
	ref  sentinel.GitHubRef
	name string // owner/repo#N
	now  time.Time
	// decorate adds the repository-scope decoration (title, url, author,
	// draft; " - <title>" in the summary).
	decorate *snapshot
}

func newEmitter(ref sentinel.GitHubRef, now time.Time) *emitter {
	return &emitter{ref: ref, name: fmt.Sprintf("%s#%d", ref.FullName(), ref.Number), now: now}
}

// build assembles one event. when is GitHub's time of the change (zero
// falls back to the poll time).
func (e *emitter) build(typ string, parts []string, summary string, terminal bool, when time.Time, data map[string]any) sentinel.Event {
	if when.IsZero() {
		when = e.now
	}
	data["repo"] = e.ref.FullName()
	data["number"] = e.ref.Number
	if d := e.decorate; d != nil {
		data["title"], data["url"], data["draft"] = d.Title, d.URL, d.Draft
		if _, ok := data["author"]; !ok {
			data["author"] = d.Author
		}
		if d.Title != "" {
			summary += " - " + cut(oneLine(d.Title), 80)
		}
	}
	id := eventID(append([]string{e.name}, parts...)...)
	return sentinel.NewEvent(id, Source, typ, e.ref.Subject(), e.ref.Subjects(), when, summary, terminal, data)
}

func withTrust(data map[string]any, t trust) map[string]any {
	data["actor"], data["actorIsBot"], data["actorIsGhost"] = t.Actor, t.ActorIsBot, github.IsGhost(t.Actor)
	data["authorAssociation"] = t.AuthorAssociation
	if t.Author != "" {
		data["author"] = t.Author
		data["authorAssociation"] = github.TrustedAssociation(t.Author, t.AuthorAssociation)
		if t.AuthorBot || isBotLogin(t.Author) {
			data["authorIsBot"] = true
		}
		if github.IsGhost(t.Author) {
			data["authorIsGhost"] = true
		}
	}
	return data
}

// closed is the terminal event; its id uses GitHub's closed_at/merged_at so
// a retried poll re-mints the same id and a reopen-then-close a new one.
func (e *emitter) closed(s *snapshot, late bool) sentinel.Event {
	merged := s.State == stateMerged
	verb := "closed"
	if merged {
		verb = "merged"
	}
	data := withTrust(map[string]any{"action": "closed", "merged": merged}, prTrust(s, s.MergedBy, false))
	if late {
		data["late"] = true
	}
	return e.build(typeClosed, []string{"closed", s.State, s.ClosedAt}, fmt.Sprintf("PR %s %s", e.name, verb), true, parseTime(s.ClosedAt), data)
}

// reviewInfo is what a review event needs.
type reviewInfo struct {
	ID          int64
	Login       string
	Bot         bool
	State       string
	SubmittedAt time.Time
	Assoc       string
	URL         string
	Body        string
	CommitID    string
	// Comments are the review's inline comments (nil: not listed;
	// Unavailable: GitHub refused to list them).
	Comments    []github.ReviewComment
	Listed      bool
	Unavailable bool
}

// review is a submitted review, with its body and (the webhook's shape)
// its inline comments, up to github.MaxReviewComments, counted when
// clipped.
func (e *emitter) review(r reviewInfo) sentinel.Event {
	data := withTrust(map[string]any{"action": "submitted", "state": r.State, "reviewId": r.ID, "reviewUrl": r.URL,
		"body": github.CapText(r.Body, github.MaxCommentBody), "commitId": r.CommitID},
		trust{Actor: r.Login, ActorIsBot: r.Bot || isBotLogin(r.Login), Author: r.Login, AuthorBot: r.Bot, AuthorAssociation: r.Assoc})
	summary := fmt.Sprintf("PR %s review %s by %s", e.name, r.State, r.Login)
	switch {
	case r.Unavailable:
		data["commentsUnavailable"] = true
	case r.Listed:
		f := github.ReviewCommentsOf(r.Comments, r.ID)
		data["comments"], data["commentsTotal"], data["commentsClipped"] = f.Comments, f.Total, f.Clipped
		if f.Total > 0 {
			summary += fmt.Sprintf(" (%d inline comment%s)", f.Total, plural(f.Total))
		}
	}
	return e.build(typeReview, []string{"review", r.Login, r.State, r.SubmittedAt.UTC().Format(time.RFC3339), fmt.Sprint(r.ID)},
		summary, false, r.SubmittedAt, data)
}

// reviewComment is github.pull_request_review_comment.created for one
// inline comment, in the webhook's shape (github.ReviewCommentEventData).
func (e *emitter) reviewComment(c *github.ReviewComment) sentinel.Event {
	raw, _ := json.Marshal(github.ReviewCommentEventData("created", e.ref.FullName(), e.ref.Number, c))
	data := map[string]any{}
	_ = json.Unmarshal(raw, &data)
	where := oneLine(c.Path)
	if c.Line != nil {
		where += fmt.Sprintf(":%d", *c.Line)
	}
	return e.build(typeReviewComment, []string{"review_comment", fmt.Sprint(c.ID)},
		fmt.Sprintf("New review comment on %s %s by %s", e.name, cut(where, 200), github.LoginOf(c.User)), false, c.CreatedAt, data)
}

// job is github.workflow_job.completed for one GitHub Actions job, in the
// webhook's shape (github.WorkflowJobEventData).
func (e *emitter) job(j *github.WorkflowJob) sentinel.Event {
	d, summary := github.WorkflowJobEventData(e.ref.FullName(), e.ref.Number, j)
	raw, _ := json.Marshal(d)
	data := map[string]any{}
	_ = json.Unmarshal(raw, &data)
	concl := ""
	if j.Conclusion != nil {
		concl = *j.Conclusion
	}
	return e.build(typeJob, []string{"job", fmt.Sprint(j.ID), concl}, summary, false, time.Time{}, data)
}

func (e *emitter) synchronize(s *snapshot) sentinel.Event {
	data := withTrust(map[string]any{"action": "synchronize", "headSha": s.Head}, prTrust(s, "", false))
	return e.build(typeSync, []string{"synchronize", s.Head},
		fmt.Sprintf("New commits pushed to %s (%s)", e.name, short(s.Head)), false, time.Time{}, data)
}

// checkResult is one newly completed check.
type checkResult struct {
	Name       string `json:"name"`
	Conclusion string `json:"conclusion"`
}

func (e *emitter) checkSuite(s *snapshot, done []checkResult, parts []string, pending int) sentinel.Event {
	conclusion := rollup(done)
	data := withTrust(map[string]any{"action": "completed", "conclusion": conclusion, "checks": done,
		"headSha": s.Head, "pending": pending}, prTrust(s, "", false))
	return e.build(typeChecks, append([]string{"checks", s.Head}, parts...),
		fmt.Sprintf("Check suite %s for %s", conclusion, e.name), false, time.Time{}, data)
}

// commentInfo is what a comment event needs.
type commentInfo struct {
	ID        int64
	Login     string
	Bot       bool
	Assoc     string
	Body      string
	URL       string
	CreatedAt time.Time
}

func (e *emitter) comment(c commentInfo) sentinel.Event {
	data := withTrust(map[string]any{"action": "created", "commentId": c.ID, "body": capBytes(c.Body, maxBodyBytes), "commentUrl": c.URL},
		trust{Actor: c.Login, ActorIsBot: c.Bot || isBotLogin(c.Login), Author: c.Login, AuthorBot: c.Bot, AuthorAssociation: c.Assoc})
	return e.build(typeComment, []string{"comment", fmt.Sprint(c.ID)},
		fmt.Sprintf("New comment on %s by %s", e.name, c.Login), false, c.CreatedAt, data)
}

// rollup is the worst-of conclusion: failure if any failed, timed out, was
// cancelled or needs action; success if all are success, skipped or
// neutral; else neutral.
func rollup(cs []checkResult) string {
	allOK := true
	for _, c := range cs {
		switch c.Conclusion {
		case "failure", "timed_out", "cancelled", "action_required":
			return "failure"
		case "success", "skipped", "neutral":
		default:
			allOK = false
		}
	}
	if allOK {
		return "success"
	}
	return "neutral"
}

func parseTime(s string) time.Time {
	t, _ := time.Parse(time.RFC3339, s)
	return t
}

func short(sha string) string { return sha[:min(7, len(sha))] }

// oneLine replaces control characters so a title cannot break a summary.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, s)
}

// cut shortens s to n runes, ending in "..." when cut.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-3]) + "..."
}

// capBytes bounds free text kept in data at valid UTF-8.
func capBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "…"
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
