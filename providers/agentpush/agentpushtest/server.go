package agentpushtest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"
)

// DefaultKey is the API key the server accepts unless Config.APIKey is set.
const DefaultKey = "ap_test_k3y_do_not_leak_0123456789"

// Config configures a fake server. Every field is optional.
type Config struct {
	// APIKey is the accepted bearer key (default DefaultKey).
	APIKey string
	// Now is the clock used to sign push deliveries (default time.Now).
	Now func() time.Time
	// PushClient sends push deliveries (default http.DefaultClient; pass
	// an httptest TLS server's Client() to push to https).
	PushClient *http.Client
}

// Request is one logged API request.
type Request struct {
	Method string
	Path   string
	Query  string
	Header http.Header
	Body   []byte
}

// Server is a running fake agentpush API. Its methods are safe for
// concurrent use.
type Server struct {
	// URL is the base URL (http://127.0.0.1:<port>, no trailing slash).
	URL string

	t   testing.TB
	cfg Config
	srv *httptest.Server

	mu         sync.Mutex
	key        string
	authStatus int
	faults     []int
	subs       map[string]*sub
	nextID     int
	log        []Request
}

// Start starts a fake server on loopback; it is closed by t.Cleanup.
func Start(t testing.TB, cfg Config) *Server {
	t.Helper()
	if cfg.APIKey == "" {
		cfg.APIKey = DefaultKey
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.PushClient == nil {
		cfg.PushClient = http.DefaultClient
	}
	s := &Server{t: t, cfg: cfg, key: cfg.APIKey, subs: map[string]*sub{}}
	s.srv = httptest.NewServer(s.routes())
	s.URL = s.srv.URL
	t.Cleanup(s.srv.Close)
	return s
}

// Key returns the currently accepted API key.
func (s *Server) Key() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.key
}

// SetKey rotates the accepted API key; requests with the old one get 401.
func (s *Server) SetKey(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.key = key
}

// FailAuth makes every request answer status (401 or 403) whatever its
// key, until called with 0.
func (s *Server) FailAuth(status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.authStatus = status
}

// FailNext makes the next n requests answer status (e.g. 503).
func (s *Server) FailNext(status, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.faults = append(s.faults, status)
	}
}

// Requests returns a copy of the request log, oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.log...)
}

// RequestsTo returns the logged requests with the method whose path is
// path (exactly).
func (s *Server) RequestsTo(method, path string) []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.Method == method && r.Path == path {
			out = append(out, r)
		}
	}
	return out
}

// ResetRequests clears the request log.
func (s *Server) ResetRequests() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = nil
}

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /subscriptions", s.handleCreate)
	mux.HandleFunc("GET /subscriptions/{id}", s.handleGet)
	mux.HandleFunc("PATCH /subscriptions/{id}", s.handlePatch)
	mux.HandleFunc("DELETE /subscriptions/{id}", s.handleDelete)
	mux.HandleFunc("GET /subscriptions/{id}/events", s.handleEvents)
	mux.HandleFunc("POST /subscriptions/{id}/ack", s.handleAck)
	return s.middleware(mux)
}

// middleware logs the request, then applies injected faults and the
// bearer-key check before routing.
func (s *Server) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		r.Body = io.NopCloser(bytes.NewReader(body))
		s.mu.Lock()
		s.log = append(s.log, Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body})
		fault := 0
		if len(s.faults) > 0 {
			fault, s.faults = s.faults[0], s.faults[1:]
		}
		key, authStatus := s.key, s.authStatus
		s.mu.Unlock()
		switch {
		case fault != 0:
			writeError(w, fault, "injected failure")
		case r.Header.Get("Authorization") != "Bearer "+key:
			writeError(w, http.StatusUnauthorized, "invalid api key")
		case authStatus == http.StatusForbidden:
			writeError(w, http.StatusForbidden, "api key lacks the subscriptions scope")
		case authStatus != 0:
			writeError(w, authStatus, "invalid api key")
		default:
			next.ServeHTTP(w, r)
		}
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

// sortedIDs returns subscription ids in creation order. mu must be held.
func (s *Server) sortedIDs() []string {
	ids := make([]string, 0, len(s.subs))
	for id := range s.subs {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool {
		a, _ := strconv.Atoi(ids[i][len("sub_"):])
		b, _ := strconv.Atoi(ids[j][len("sub_"):])
		return a < b
	})
	return ids
}
