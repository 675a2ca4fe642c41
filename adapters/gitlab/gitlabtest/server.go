// Package gitlabtest is a fake GitLab (REST API v4, the endpoints the
// adapter reads) on loopback over TLS: merge requests, notes, pipelines and
// approvals in memory, the PRIVATE-TOKEN checked, an ETag on every answer
// and 304 for a matching If-None-Match (counted, so tests see a quiet poll
// cost only 304s).
package gitlabtest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Server is the fake.
type Server struct {
	*httptest.Server
	Token string

	mu       sync.Mutex
	projects map[string]*project
	clock    time.Time
	ok       int
	notMod   int
}

type project struct {
	mrs       map[int]map[string]any
	notes     map[int][]map[string]any
	pipelines map[int][]map[string]any
	approvers map[int][]string
	nextNote  int64
	nextPipe  int64
}

// New starts the fake with the token it accepts; it stops at the test's
// end.
func New(t testing.TB, token string) *Server {
	s := &Server{Token: token, projects: map[string]*project{}, clock: time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)}
	s.Server = httptest.NewTLSServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// CertFile writes the server's certificate to a PEM file (for
// SSL_CERT_FILE of an adapter process) and returns its path.
func (s *Server) CertFile(t testing.TB) string {
	p := filepath.Join(t.TempDir(), "gitlab-fake.pem")
	raw := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw})
	if err := os.WriteFile(p, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// Counts returns the 200 and 304 answers so far.
func (s *Server) Counts() (ok, notModified int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ok, s.notMod
}

func (s *Server) tick() string {
	s.clock = s.clock.Add(time.Second)
	return s.clock.Format(time.RFC3339)
}

func (s *Server) proj(path string) *project {
	p := s.projects[path]
	if p == nil {
		p = &project{mrs: map[int]map[string]any{}, notes: map[int][]map[string]any{}, pipelines: map[int][]map[string]any{}, approvers: map[int][]string{}}
		s.projects[path] = p
	}
	return p
}

// OpenMR adds an open merge request.
func (s *Server) OpenMR(projectPath string, iid int, title, sha, author string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	at := s.tick()
	s.proj(projectPath).mrs[iid] = map[string]any{"iid": iid, "title": title, "state": "opened", "sha": sha, "updated_at": at,
		"web_url": s.URL + "/" + projectPath + "/-/merge_requests/" + strconv.Itoa(iid), "author": map[string]any{"username": author}}
}

// Push moves a merge request's head.
func (s *Server) Push(projectPath string, iid int, sha string) {
	s.update(projectPath, iid, func(mr map[string]any, at string) { mr["sha"] = sha })
}

// Merge merges a merge request.
func (s *Server) Merge(projectPath string, iid int, by string) {
	s.update(projectPath, iid, func(mr map[string]any, at string) {
		mr["state"], mr["merged_at"], mr["merged_by"] = "merged", at, map[string]any{"username": by}
	})
}

// CloseMR closes a merge request.
func (s *Server) CloseMR(projectPath string, iid int, by string) {
	s.update(projectPath, iid, func(mr map[string]any, at string) {
		mr["state"], mr["closed_at"], mr["closed_by"] = "closed", at, map[string]any{"username": by}
	})
}

func (s *Server) update(projectPath string, iid int, fn func(map[string]any, string)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	at := s.tick()
	mr := s.proj(projectPath).mrs[iid]
	fn(mr, at)
	mr["updated_at"] = at
}

// Note adds a note by author (system: GitLab's own).
func (s *Server) Note(projectPath string, iid int, author, body string, system bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.proj(projectPath)
	p.nextNote++
	p.notes[iid] = append(p.notes[iid], map[string]any{"id": p.nextNote, "body": body, "system": system, "created_at": s.tick(),
		"author": map[string]any{"username": author}})
}

// Pipeline adds a pipeline for sha with status, or sets the status of
// the pipeline id (id > 0); it returns the id.
func (s *Server) Pipeline(projectPath string, iid int, id int64, sha, status string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.proj(projectPath)
	for _, pl := range p.pipelines[iid] {
		if pl["id"] == id {
			pl["status"] = status
			return id
		}
	}
	p.nextPipe++
	p.pipelines[iid] = append([]map[string]any{{"id": p.nextPipe, "sha": sha, "status": status, "web_url": s.URL + "/pipelines/" + strconv.FormatInt(p.nextPipe, 10)}}, p.pipelines[iid]...)
	return p.nextPipe
}

// Approve records an approval by user; Unapprove removes it.
func (s *Server) Approve(projectPath string, iid int, user string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.proj(projectPath)
	p.approvers[iid] = append(p.approvers[iid], user)
}

// Unapprove removes user's approval.
func (s *Server) Unapprove(projectPath string, iid int, user string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.proj(projectPath)
	var keep []string
	for _, u := range p.approvers[iid] {
		if u != user {
			keep = append(keep, u)
		}
	}
	p.approvers[iid] = keep
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("PRIVATE-TOKEN") != s.Token {
		http.Error(w, `{"message":"401 Unauthorized"}`, http.StatusUnauthorized)
		return
	}
	body, status := s.route(r)
	if status != http.StatusOK {
		w.WriteHeader(status)
		_, _ = w.Write(body)
		return
	}
	sum := sha256.Sum256(body)
	etag := `W/"` + hex.EncodeToString(sum[:8]) + `"`
	s.mu.Lock()
	if r.Header.Get("If-None-Match") == etag {
		s.notMod++
		s.mu.Unlock()
		w.WriteHeader(http.StatusNotModified)
		return
	}
	s.ok++
	s.mu.Unlock()
	w.Header().Set("ETag", etag)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

// route answers GET /api/v4/user and the merge request endpoints.
func (s *Server) route(r *http.Request) ([]byte, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	path := strings.TrimPrefix(r.URL.EscapedPath(), "/api/v4")
	if path == "/user" {
		return mustJSON(map[string]any{"username": "sentinel-bot"}), http.StatusOK
	}
	parts := strings.Split(strings.TrimPrefix(path, "/"), "/")
	if len(parts) < 3 || parts[0] != "projects" || parts[2] != "merge_requests" {
		return []byte(`{"message":"404 Not Found"}`), http.StatusNotFound
	}
	id, err := url.PathUnescape(parts[1])
	p, known := s.projects[id]
	if err != nil || !known {
		return []byte(`{"message":"404 Project Not Found"}`), http.StatusNotFound
	}
	if len(parts) == 3 {
		list := []map[string]any{}
		for _, mr := range p.mrs {
			list = append(list, mr)
		}
		return mustJSON(list), http.StatusOK
	}
	iid, err := strconv.Atoi(parts[3])
	mr, ok := p.mrs[iid]
	if err != nil || !ok {
		return []byte(`{"message":"404 Not found"}`), http.StatusNotFound
	}
	if len(parts) == 4 {
		return mustJSON(mr), http.StatusOK
	}
	switch parts[4] {
	case "notes":
		list := append([]map[string]any{}, p.notes[iid]...)
		for i, j := 0, len(list)-1; i < j; i, j = i+1, j-1 { // newest first
			list[i], list[j] = list[j], list[i]
		}
		return mustJSON(list), http.StatusOK
	case "pipelines":
		return mustJSON(append([]map[string]any{}, p.pipelines[iid]...)), http.StatusOK
	case "approvals":
		by := []map[string]any{}
		for _, u := range p.approvers[iid] {
			by = append(by, map[string]any{"user": map[string]any{"username": u}})
		}
		return mustJSON(map[string]any{"approved": len(by) > 0, "approved_by": by}), http.StatusOK
	}
	return []byte(`{"message":"404 Not Found"}`), http.StatusNotFound
}

func mustJSON(v any) []byte {
	raw, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return raw
}
