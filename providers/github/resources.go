package github

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
)

// ErrDotSegment is wrapped by the error of a REST call whose path has a
// "." or ".." segment.
var ErrDotSegment = errors.New(`GitHub REST path has a "." or ".." segment`)

// CheckRESTPath refuses a REST path (query excluded) with a "." or ".."
// segment, literal or percent-encoded, with a *providers.Error of
// ReasonInvalid wrapping ErrDotSegment. Owner and repository names come
// from subjects and webhook payloads; the subject grammar already refuses
// them as names, and this keeps any path built around it from addressing
// another resource (repos/../x/hooks) through gh or the REST client.
func CheckRESTPath(path string) error {
	p, _, _ := strings.Cut(path, "?")
	for _, seg := range strings.Split(p, "/") {
		if dec, err := url.PathUnescape(seg); err == nil {
			seg = dec
		}
		if sentinel.IsDotSegment(seg) {
			return &providers.Error{Reason: providers.ReasonInvalid, Message: fmt.Sprintf("GitHub REST path %q has a %q segment", p, seg), Err: ErrDotSegment}
		}
	}
	return nil
}

// User is a GitHub account as REST returns it.
type User struct {
	Login string `json:"login"`
	ID    int64  `json:"id"`
	Type  string `json:"type"`
}

// IsBot reports whether the account is a bot: type "Bot" or a login
// ending in "[bot]" (IsBotAccount).
func (u *User) IsBot() bool { return u != nil && IsBotAccount(u.Login, u.Type) }

// IsGhost reports whether the account is GitHub's stand-in for a deleted
// user (IsGhost).
func (u *User) IsGhost() bool { return u != nil && IsGhost(u.Login) }

// LoginOf returns u's login, "" for nil.
func LoginOf(u *User) string {
	if u == nil {
		return ""
	}
	return u.Login
}

// PullRequest is the subset of a REST pull request the providers read
// (GET /repos/o/r/pulls/N and the pulls list).
type PullRequest struct {
	Number            int        `json:"number"`
	State             string     `json:"state"`
	Title             string     `json:"title"`
	HTMLURL           string     `json:"html_url"`
	Draft             bool       `json:"draft"`
	User              *User      `json:"user"`
	AuthorAssociation string     `json:"author_association"`
	CreatedAt         time.Time  `json:"created_at"`
	UpdatedAt         time.Time  `json:"updated_at"`
	ClosedAt          *time.Time `json:"closed_at"`
	MergedAt          *time.Time `json:"merged_at"`
	MergedBy          *User      `json:"merged_by"`
	Head              struct {
		SHA  string `json:"sha"`
		Ref  string `json:"ref"`
		Repo *struct {
			FullName string `json:"full_name"`
		} `json:"repo"`
	} `json:"head"`
}

// HeadRepo is the full name of the PR's head repository when it is not
// base (a fork's PR), else "".
func (p *PullRequest) HeadRepo(base string) string {
	if p.Head.Repo == nil || strings.EqualFold(p.Head.Repo.FullName, base) {
		return ""
	}
	return p.Head.Repo.FullName
}

// Review is a pull request review (GET /repos/o/r/pulls/N/reviews).
type Review struct {
	ID                int64      `json:"id"`
	User              *User      `json:"user"`
	State             string     `json:"state"`
	Body              string     `json:"body"`
	SubmittedAt       *time.Time `json:"submitted_at"`
	CommitID          string     `json:"commit_id"`
	AuthorAssociation string     `json:"author_association"`
	HTMLURL           string     `json:"html_url"`
}

// CheckRuns is GET /repos/o/r/commits/SHA/check-runs.
type CheckRuns struct {
	TotalCount int        `json:"total_count"`
	CheckRuns  []CheckRun `json:"check_runs"`
}

// CheckRun is one check run.
type CheckRun struct {
	ID          int64      `json:"id"`
	Name        string     `json:"name"`
	HeadSHA     string     `json:"head_sha"`
	Status      string     `json:"status"`
	Conclusion  *string    `json:"conclusion"`
	CompletedAt *time.Time `json:"completed_at"`
	DetailsURL  string     `json:"details_url"`
	App         *struct {
		Slug string `json:"slug"`
	} `json:"app"`
}

// ActionsApp is the slug of GitHub Actions' app: its check runs are
// workflow jobs (the check run id is the job id).
const ActionsApp = "github-actions"

// IsActionsJob reports whether the check run is a GitHub Actions job.
func (r *CheckRun) IsActionsJob() bool { return r.App != nil && r.App.Slug == ActionsApp }

// CombinedStatus is GET /repos/o/r/commits/SHA/status.
type CombinedStatus struct {
	State    string         `json:"state"`
	SHA      string         `json:"sha"`
	Statuses []CommitStatus `json:"statuses"`
}

// CommitStatus is one commit status context (latest per context).
type CommitStatus struct {
	Context   string    `json:"context"`
	State     string    `json:"state"`
	UpdatedAt time.Time `json:"updated_at"`
}

// IssueComment is a comment on an issue or pull request
// (GET /repos/o/r/issues/N/comments).
type IssueComment struct {
	ID                int64     `json:"id"`
	User              *User     `json:"user"`
	Body              string    `json:"body"`
	HTMLURL           string    `json:"html_url"`
	CreatedAt         time.Time `json:"created_at"`
	UpdatedAt         time.Time `json:"updated_at"`
	AuthorAssociation string    `json:"author_association"`
}
