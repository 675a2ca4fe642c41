package githubtest

import (
	"fmt"
	"strings"
	"time"
)

// repo is the state of one repository (keyed "owner/name").
type repo struct {
	name     string
	id       int64
	pulls    map[int]*pull
	reviews  map[int][]*review
	comments map[int][]*comment
	// reviewComments are each PR's inline review comments, oldest first.
	reviewComments map[int][]*reviewComment
	checkRuns      map[string][]*checkRun
	statuses       map[string][]*status
	hooks          map[int64]*hook
	hookOrder      []int64
	deliveries     map[int64][]*delivery
}

type pull struct {
	number      int
	title       string
	author      string
	association string
	head        string
	headRef     string
	headRepo    string // "" for the base repository itself
	draft       bool
	state       string
	createdAt   time.Time
	updatedAt   time.Time
	closedAt    *time.Time
	mergedAt    *time.Time
	mergedBy    string
}

type review struct {
	id          int64
	user        string
	state       string
	body        string
	association string
	commit      string
	submittedAt time.Time
}

type comment struct {
	id          int64
	user        string
	body        string
	association string
	createdAt   time.Time
	updatedAt   time.Time
}

type checkRun struct {
	id          int64
	name        string
	status      string
	conclusion  string
	startedAt   time.Time
	completedAt *time.Time
	// steps are the job's steps (GitHub Actions: the check run is a job,
	// served at /actions/jobs/ID).
	steps []Step
}

// Step is one step of a GitHub Actions job (a check run): its name and,
// once completed, its conclusion.
type Step struct {
	Name       string
	Conclusion string
}

type reviewComment struct {
	id          int64
	reviewID    int64
	inReplyTo   int64
	user        string
	association string
	path        string
	line        int
	body        string
	diffHunk    string
	commit      string
	createdAt   time.Time
	updatedAt   time.Time
}

// InlineComment describes an inline comment of a review (Review.Comments)
// or a reply (AddReply). Line 0 renders as null (outdated); DiffHunk
// defaults to a one-line hunk of Path.
type InlineComment struct {
	Path     string
	Line     int
	Body     string
	DiffHunk string
}

type status struct {
	id        int64
	context   string
	state     string
	createdAt time.Time
	updatedAt time.Time
}

// PR describes a pull request to open. Zero fields take defaults: title
// "PR #N", author "alice" (association "CONTRIBUTOR"), head a sha derived
// from the number, head ref "feature-N", the head in the base repository
// (HeadRepo "owner/name" puts it in a fork).
type PR struct {
	Number      int
	Title       string
	Author      string
	Association string
	Head        string
	HeadRef     string
	HeadRepo    string
	Draft       bool
}

// Review describes a review to add. Association defaults to "MEMBER".
// Comments are its inline comments, created with it.
type Review struct {
	User        string
	State       string
	Body        string
	Association string
	Comments    []InlineComment
}

// Comment describes an issue comment to add. Association defaults to
// "MEMBER".
type Comment struct {
	User        string
	Body        string
	Association string
}

// repo returns (creating) the state of name (mu must be held). Names
// compare case-insensitively, as on GitHub.
func (s *Server) repo(name string) *repo {
	r := s.repos[strings.ToLower(name)]
	if r == nil {
		r = &repo{name: name, id: s.id(), pulls: map[int]*pull{}, reviews: map[int][]*review{},
			comments: map[int][]*comment{}, reviewComments: map[int][]*reviewComment{}, checkRuns: map[string][]*checkRun{}, statuses: map[string][]*status{},
			hooks: map[int64]*hook{}, deliveries: map[int64][]*delivery{}}
		s.repos[strings.ToLower(name)] = r
	}
	return r
}

// pull returns the PR or fails the test (mu must be held).
func (s *Server) pull(repoName string, n int) *pull {
	p := s.repo(repoName).pulls[n]
	if p == nil {
		s.t.Fatalf("githubtest: %s#%d does not exist", repoName, n)
	}
	return p
}

// AddRepo creates an empty repository.
func (s *Server) AddRepo(name string) { s.mu.Lock(); s.repo(name); s.mu.Unlock() }

// OpenPR opens a pull request (creating the repository).
func (s *Server) OpenPR(repoName string, pr PR) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.tick()
	if pr.Title == "" {
		pr.Title = fmt.Sprintf("PR #%d", pr.Number)
	}
	if pr.Author == "" {
		pr.Author = "alice"
	}
	if pr.Association == "" {
		pr.Association = "CONTRIBUTOR"
	}
	if pr.Head == "" {
		pr.Head = SHA(fmt.Sprintf("head-%d", pr.Number))
	}
	if pr.HeadRef == "" {
		pr.HeadRef = fmt.Sprintf("feature-%d", pr.Number)
	}
	s.repo(repoName).pulls[pr.Number] = &pull{number: pr.Number, title: pr.Title, author: pr.Author,
		association: pr.Association, head: pr.Head, headRef: pr.HeadRef, headRepo: pr.HeadRepo, draft: pr.Draft, state: "open",
		createdAt: now, updatedAt: now}
}

// SHA returns a deterministic 40-hex commit sha for seed.
func SHA(seed string) string {
	return etagOf([]byte(seed))[3:35] + "00000000"
}

// PushHead moves the PR's head to sha (a new push).
func (s *Server) PushHead(repoName string, n int, sha string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pull(repoName, n)
	p.head, p.updatedAt = sha, s.tick()
}

// SetDraft marks the PR draft or ready for review.
func (s *Server) SetDraft(repoName string, n int, draft bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pull(repoName, n)
	p.draft, p.updatedAt = draft, s.tick()
}

// Head returns the PR's head sha.
func (s *Server) Head(repoName string, n int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pull(repoName, n).head
}

// AddReview submits a review on the PR's head, with its inline comments,
// and returns its id.
func (s *Server) AddReview(repoName string, n int, rv Review) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pull(repoName, n)
	now := s.tick()
	if rv.Association == "" {
		rv.Association = "MEMBER"
	}
	id := s.id()
	r := s.repo(repoName)
	r.reviews[n] = append(r.reviews[n], &review{id: id, user: rv.User, state: strings.ToUpper(rv.State),
		body: rv.Body, association: rv.Association, commit: p.head, submittedAt: now})
	for _, c := range rv.Comments {
		s.addReviewComment(r, p, id, 0, rv.User, rv.Association, c, now)
	}
	p.updatedAt = now
	return id
}

// AddReply replies to the inline comment inReplyTo as user, as GitHub
// does: the reply is its own "commented" review's comment. It returns the
// comment's id.
func (s *Server) AddReply(repoName string, n int, inReplyTo int64, user, body string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pull(repoName, n)
	r := s.repo(repoName)
	var parent *reviewComment
	for _, c := range r.reviewComments[n] {
		if c.id == inReplyTo {
			parent = c
		}
	}
	if parent == nil {
		s.t.Fatalf("githubtest: no review comment %d on %s#%d", inReplyTo, repoName, n)
	}
	now := s.tick()
	rid := s.id()
	r.reviews[n] = append(r.reviews[n], &review{id: rid, user: user, state: "COMMENTED", association: "MEMBER", commit: p.head, submittedAt: now})
	c := s.addReviewComment(r, p, rid, inReplyTo, user, "MEMBER", InlineComment{Path: parent.path, Line: parent.line, Body: body, DiffHunk: parent.diffHunk}, now)
	p.updatedAt = now
	return c.id
}

// addReviewComment stores one inline comment (mu must be held).
func (s *Server) addReviewComment(r *repo, p *pull, reviewID, inReplyTo int64, user, assoc string, c InlineComment, now time.Time) *reviewComment {
	if c.DiffHunk == "" {
		c.DiffHunk = fmt.Sprintf("@@ -%d +%d @@ %s", max(c.Line, 1), max(c.Line, 1), c.Path)
	}
	rc := &reviewComment{id: s.id(), reviewID: reviewID, inReplyTo: inReplyTo, user: user, association: assoc,
		path: c.Path, line: c.Line, body: c.Body, diffHunk: c.DiffHunk, commit: p.head, createdAt: now, updatedAt: now}
	r.reviewComments[p.number] = append(r.reviewComments[p.number], rc)
	return rc
}

// SetCheckRun creates or updates the check run name on sha. status is
// queued, in_progress or completed; conclusion (success, failure, neutral,
// cancelled, skipped, timed_out, action_required) only when completed.
// steps, when given, are the job's steps (served at /actions/jobs/ID).
func (s *Server) SetCheckRun(repoName, sha, name, status, conclusion string, steps ...Step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.tick()
	r := s.repo(repoName)
	var cr *checkRun
	for _, c := range r.checkRuns[sha] {
		if c.name == name {
			cr = c
		}
	}
	if cr == nil {
		cr = &checkRun{id: s.id(), name: name, startedAt: now}
		r.checkRuns[sha] = append(r.checkRuns[sha], cr)
	}
	cr.status, cr.conclusion, cr.completedAt = status, conclusion, nil
	if len(steps) > 0 {
		cr.steps = append([]Step(nil), steps...)
	}
	if status == "completed" {
		cr.completedAt = &now
	}
}

// SetStatus sets the commit status context on sha (pending, success,
// failure or error).
func (s *Server) SetStatus(repoName, sha, context, state string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.tick()
	r := s.repo(repoName)
	for _, st := range r.statuses[sha] {
		if st.context == context {
			st.state, st.updatedAt = state, now
			return
		}
	}
	r.statuses[sha] = append(r.statuses[sha], &status{id: s.id(), context: context, state: state, createdAt: now, updatedAt: now})
}

// Merge merges the PR: state closed, merged_at = closed_at = now,
// merged_by by.
func (s *Server) Merge(repoName string, n int, by string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pull(repoName, n)
	now := s.tick()
	p.state, p.closedAt, p.mergedAt, p.mergedBy, p.updatedAt = "closed", &now, &now, by, now
}

// Close closes the PR without merging.
func (s *Server) Close(repoName string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pull(repoName, n)
	now := s.tick()
	p.state, p.closedAt, p.updatedAt = "closed", &now, now
}

// Reopen reopens a closed (unmerged) PR.
func (s *Server) Reopen(repoName string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pull(repoName, n)
	p.state, p.closedAt, p.updatedAt = "open", nil, s.tick()
}

// AddComment adds an issue comment to the PR and returns its id.
func (s *Server) AddComment(repoName string, n int, c Comment) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pull(repoName, n)
	now := s.tick()
	if c.Association == "" {
		c.Association = "MEMBER"
	}
	id := s.id()
	r := s.repo(repoName)
	r.comments[n] = append(r.comments[n], &comment{id: id, user: c.User, body: c.Body, association: c.Association, createdAt: now, updatedAt: now})
	p.updatedAt = now
	return id
}

// EditComment changes a comment's body (its updated_at moves).
func (s *Server) EditComment(repoName string, n int, id int64, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.repo(repoName).comments[n] {
		if c.id == id {
			c.body, c.updatedAt = body, s.tick()
			return
		}
	}
	s.t.Fatalf("githubtest: comment %d not found on %s#%d", id, repoName, n)
}

// RerunCheck re-runs the check run name on sha as GitHub does: a new check
// run (new id) replaces it, queued.
func (s *Server) RerunCheck(repoName, sha, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.tick()
	for _, c := range s.repo(repoName).checkRuns[sha] {
		if c.name == name {
			c.id, c.status, c.conclusion, c.startedAt, c.completedAt = s.id(), "queued", "", now, nil
			return
		}
	}
	s.t.Fatalf("githubtest: no check run %q on %s", name, sha)
}
