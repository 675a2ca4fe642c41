package githubtest

import (
	"fmt"
	"strings"
	"time"
)

// repo is the state of one repository (keyed "owner/name").
type repo struct {
	name       string
	id         int64
	pulls      map[int]*pull
	reviews    map[int][]*review
	comments   map[int][]*comment
	checkRuns  map[string][]*checkRun
	statuses   map[string][]*status
	hooks      map[int64]*hook
	hookOrder  []int64
	deliveries map[int64][]*delivery
}

type pull struct {
	number      int
	title       string
	author      string
	association string
	head        string
	headRef     string
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
// from the number, head ref "feature-N".
type PR struct {
	Number      int
	Title       string
	Author      string
	Association string
	Head        string
	HeadRef     string
	Draft       bool
}

// Review describes a review to add. Association defaults to "MEMBER".
type Review struct {
	User        string
	State       string
	Body        string
	Association string
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
			comments: map[int][]*comment{}, checkRuns: map[string][]*checkRun{}, statuses: map[string][]*status{},
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
		association: pr.Association, head: pr.Head, headRef: pr.HeadRef, draft: pr.Draft, state: "open",
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

// AddReview submits a review on the PR's head and returns its id.
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
	p.updatedAt = now
	return id
}

// SetCheckRun creates or updates the check run name on sha. status is
// queued, in_progress or completed; conclusion (success, failure, neutral,
// cancelled, skipped, timed_out, action_required) only when completed.
func (s *Server) SetCheckRun(repoName, sha, name, status, conclusion string) {
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
