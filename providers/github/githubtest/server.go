package githubtest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Defaults of a new Server.
const (
	DefaultToken  = "ghp_githubtestFakeToken0000000000000000"
	DefaultViewer = "octocat"
	DefaultScopes = "repo, read:org, admin:repo_hook"
	DefaultLimit  = 5000
)

// DefaultStart is the fake clock's start.
var DefaultStart = time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)

// Options configures a Server; zero values take the defaults.
type Options struct {
	// Token is the only token the server accepts (default DefaultToken).
	Token string
	// Viewer is the login of the authenticated user (default "octocat").
	Viewer string
	// Scopes is the X-OAuth-Scopes header (default DefaultScopes); set
	// NoScopes for an empty header (fine-grained tokens).
	Scopes   string
	NoScopes bool
	// Start is the fake clock's start (default DefaultStart).
	Start time.Time
	// NoLinkOn304 answers 304s without the Link header. GitHub repeats it
	// (fresh) on a 304, but RFC 9110 does not require it, so a client must
	// not depend on it; this option checks that one does not.
	NoLinkOn304 bool
}

// Server is the fake GitHub. All methods are safe for concurrent use.
type Server struct {
	t testing.TB

	mu           sync.Mutex
	now          time.Time
	token        string
	viewer       string
	scopes       string
	repos        map[string]*repo
	nextID       int64
	log          []Request
	unexpected   []string
	faults       []*Fault
	redeliveries []Redelivery
	quotaUsed    int
	remaining    int
	noLinkOn304  bool
	// app is the GitHub App (app.go); nil until SetApp.
	app *app
	// lim is the enforced rate limit (ratelimit.go); nil: none.
	lim *limiter

	certs    *certs
	caFile   string
	proxyURL string
	tunnels  *chanListener
	client   *http.Client
}

// Request is one logged request.
type Request struct {
	Method      string
	Path        string
	Query       string
	Status      int
	IfNoneMatch string
	UserAgent   string
	// APIVersion is the request's X-GitHub-Api-Version header.
	APIVersion string
	Body       []byte
	Unexpected bool
	Fault      bool
	// Enterprise is a request under /api/v3 (GitHub Enterprise Server's
	// REST root; Path is without it).
	Enterprise bool
}

// New starts a fake GitHub for the test and stops it at cleanup.
func New(t testing.TB, opts Options) *Server {
	t.Helper()
	s := &Server{t: t, repos: map[string]*repo{}, nextID: 1000, remaining: DefaultLimit}
	s.token, s.viewer, s.scopes, s.now = opts.Token, opts.Viewer, opts.Scopes, opts.Start
	s.noLinkOn304 = opts.NoLinkOn304
	if s.token == "" {
		s.token = DefaultToken
	}
	if s.viewer == "" {
		s.viewer = DefaultViewer
	}
	if s.scopes == "" && !opts.NoScopes {
		s.scopes = DefaultScopes
	}
	if s.now.IsZero() {
		s.now = DefaultStart
	}
	c, err := newCerts()
	require.NoError(t, err)
	s.certs = c
	dir := t.TempDir()
	s.caFile = filepath.Join(dir, "ca.pem")
	require.NoError(t, os.WriteFile(s.caFile, c.caPEM, 0o600))

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	s.proxyURL = "http://" + ln.Addr().String()
	s.tunnels = newChanListener(ln.Addr())
	api := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	proxy := &http.Server{Handler: http.HandlerFunc(s.proxyHandler), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = api.Serve(tlsListener(s.tunnels, c)) }()
	go func() { _ = proxy.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = proxy.Shutdown(ctx)
		_ = api.Shutdown(ctx)
		_ = api.Close()
		_ = s.tunnels.Close()
		if s.client != nil {
			s.client.CloseIdleConnections()
		}
	})
	return s
}

// Token returns the token the server accepts.
func (s *Server) Token() string { s.mu.Lock(); defer s.mu.Unlock(); return s.token }

// SetToken changes the accepted token (a rotated or revoked credential).
func (s *Server) SetToken(tok string) { s.mu.Lock(); s.token = tok; s.mu.Unlock() }

// SetScopes sets the X-OAuth-Scopes header ("" sends an empty header).
func (s *Server) SetScopes(scopes string) { s.mu.Lock(); s.scopes = scopes; s.mu.Unlock() }

// Now returns the fake clock.
func (s *Server) Now() time.Time { s.mu.Lock(); defer s.mu.Unlock(); return s.now }

// Advance moves the fake clock forward.
func (s *Server) Advance(d time.Duration) { s.mu.Lock(); s.now = s.now.Add(d); s.mu.Unlock() }

// tick advances the clock by a minute and returns it (mu must be held).
func (s *Server) tick() time.Time {
	s.now = s.now.Add(time.Minute)
	return s.now
}

// id returns a fresh id (mu must be held).
func (s *Server) id() int64 { s.nextID++; return s.nextID }

// Requests returns a copy of the request log.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.log...)
}

// ResetLog clears the request log (not the unexpected list) and the quota
// counter.
func (s *Server) ResetLog() {
	s.mu.Lock()
	s.log, s.quotaUsed = nil, 0
	s.mu.Unlock()
}

// Count returns how many logged requests have method (any when "") and a
// path starting with prefix.
func (s *Server) Count(method, prefix string) int { // prefix compares case-insensitively
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, r := range s.log {
		if (method == "" || r.Method == method) && strings.HasPrefix(strings.ToLower(r.Path), strings.ToLower(prefix)) {
			n++
		}
	}
	return n
}

// QuotaUsed returns the rate-limit points charged since the last ResetLog:
// every answer except a 304.
func (s *Server) QuotaUsed() int { s.mu.Lock(); defer s.mu.Unlock(); return s.quotaUsed }

// Unexpected lists the requests the fake did not expect (unknown routes,
// wrong methods, unsupported GraphQL, non-CONNECT proxy use).
func (s *Server) Unexpected() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.unexpected...)
}

// Verify fails t when the fake saw a request it did not expect.
func (s *Server) Verify(t testing.TB) {
	t.Helper()
	require.Empty(t, s.Unexpected(), "githubtest: unexpected requests")
}

func (s *Server) recordUnexpected(method, what string) {
	s.mu.Lock()
	s.unexpected = append(s.unexpected, method+" "+what)
	s.mu.Unlock()
}

// reply is a handler's answer.
type reply struct {
	status     int
	body       []byte
	header     http.Header
	unexpected bool
	// pages and linkPath: the reply is one page of a list (Link header).
	pages    *pageInfo
	linkPath string
	// next is the path and query of the next page of a cursor-paginated
	// list (Link rel="next" under the API root); "" on the last page.
	next string
}

func jsonReply(status int, v any) reply {
	b, err := json.Marshal(v)
	if err != nil {
		return reply{status: http.StatusInternalServerError, body: []byte(`{"message":"githubtest: marshal"}`)}
	}
	return reply{status: status, body: b}
}

func notFound() reply { return jsonReply(http.StatusNotFound, msgBody("Not Found")) }

func msgBody(m string) map[string]any {
	return map[string]any{"message": m, "documentation_url": "https://docs.github.com/rest"}
}

// ServeHTTP implements http.Handler for the tunnelled API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	path := strings.TrimPrefix(r.URL.Path, "/api/v3")
	entry := Request{Method: r.Method, Path: path, Query: r.URL.RawQuery,
		IfNoneMatch: r.Header.Get("If-None-Match"), UserAgent: r.Header.Get("User-Agent"),
		APIVersion: r.Header.Get("X-GitHub-Api-Version"), Body: body, Enterprise: strings.HasPrefix(r.URL.Path, "/api/v3/")}

	s.mu.Lock()
	defer s.mu.Unlock()
	var rep reply
	if f := s.matchFault(r.Method, path); f != nil {
		entry.Fault = true
		rep = reply{status: f.Status, body: []byte(f.Body), header: f.Header}
	} else if lr, ok := s.refuse(r.Header.Get("Authorization")); ok {
		rep = lr
	} else if ar, ok := s.routeApp(r, path, body); ok {
		rep = ar
	} else if !s.authorized(r.Header.Get("Authorization")) {
		rep = jsonReply(http.StatusUnauthorized, msgBody("Bad credentials"))
	} else {
		rep = s.route(r, path, body)
	}
	if rep.unexpected {
		entry.Unexpected = true
		s.unexpected = append(s.unexpected, r.Method+" "+r.URL.RequestURI())
	}
	h := w.Header()
	for k, vs := range rep.header {
		h[k] = vs
	}
	if rep.status == 0 {
		rep.status = http.StatusOK
	}
	if rep.pages != nil && rep.status == http.StatusOK {
		root := "https://" + r.Host
		if strings.HasPrefix(r.URL.Path, "/api/v3/") {
			root += "/api/v3"
		}
		if link := linkHeader(root, rep.linkPath, r.URL.Query(), *rep.pages); link != "" {
			h.Set("Link", link) // on a 304 too: the ETag covers the body, not the Link
		}
	}
	if rep.next != "" && rep.status == http.StatusOK {
		root := "https://" + r.Host
		if strings.HasPrefix(r.URL.Path, "/api/v3/") {
			root += "/api/v3"
		}
		h.Set("Link", fmt.Sprintf(`<%s%s>; rel="next"`, root, rep.next))
	}
	h.Set("Date", s.now.UTC().Format(http.TimeFormat))
	h.Set("X-GitHub-Request-Id", strconv.FormatInt(s.id(), 16))
	h.Set("X-OAuth-Scopes", s.scopes)
	h.Set("X-Accepted-OAuth-Scopes", "repo")
	if r.Method == http.MethodGet && rep.status == http.StatusOK {
		etag := etagOf(rep.body)
		h.Set("ETag", etag)
		if sameETag(r.Header.Get("If-None-Match"), etag) {
			rep.status, rep.body = http.StatusNotModified, nil
			if s.noLinkOn304 {
				h.Del("Link")
			}
		}
	}
	s.charge(r.Header.Get("Authorization"), rep.status, h)
	if rep.status != http.StatusNotModified {
		s.quotaUsed++
		if s.remaining > 0 {
			s.remaining--
		}
	}
	if h.Get("X-RateLimit-Remaining") == "" {
		h.Set("X-RateLimit-Limit", strconv.Itoa(DefaultLimit))
		h.Set("X-RateLimit-Remaining", strconv.Itoa(s.remaining))
		h.Set("X-RateLimit-Used", strconv.Itoa(DefaultLimit-s.remaining))
		h.Set("X-RateLimit-Reset", strconv.FormatInt(s.now.Add(time.Hour).Unix(), 10))
		h.Set("X-RateLimit-Resource", "core")
	}
	if len(rep.body) > 0 {
		h.Set("Content-Type", "application/json; charset=utf-8")
	}
	entry.Status = rep.status
	s.log = append(s.log, entry)
	w.WriteHeader(rep.status)
	if rep.status != http.StatusNotModified && rep.status != http.StatusNoContent {
		_, _ = w.Write(rep.body)
	}
}

// authorized checks "token X" or "Bearer X" against the accepted token
// (mu must be held).
func (s *Server) authorized(h string) bool {
	_, tok, ok := strings.Cut(h, " ")
	return ok && s.token != "" && tok == s.token
}

func etagOf(body []byte) string {
	sum := sha256.Sum256(body)
	return `W/"` + hex.EncodeToString(sum[:16]) + `"`
}

func sameETag(inm, etag string) bool {
	if inm == "" {
		return false
	}
	for _, c := range strings.Split(inm, ",") {
		c = strings.TrimSpace(c)
		if c == "*" || strings.TrimPrefix(c, "W/") == strings.TrimPrefix(etag, "W/") {
			return true
		}
	}
	return false
}
