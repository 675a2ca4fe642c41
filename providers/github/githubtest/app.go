package githubtest

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/hex"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// DefaultTokenTTL is how long an installation token the fake issues lives
// (GitHub's: one hour).
const DefaultTokenTTL = time.Hour

// app is the fake's GitHub App: its key, installations, issued tokens and
// the deliveries of its one webhook.
type app struct {
	id            int64
	slug          string
	pub           *rsa.PublicKey
	installations map[int64]*installation
	tokens        map[string]appToken
	tokenTTL      time.Duration
	issued        int
	deliveries    []*delivery
	redelivered   []int64
}

// installation is one installation of the App on an account.
type installation struct {
	id      int64
	account string
	repos   []string
}

// appToken is an issued installation token.
type appToken struct {
	installation int64
	expires      time.Time
}

// SetApp registers the GitHub App the fake knows: its id, slug and the
// public half of its private key, which App JWTs must be signed with.
func (s *Server) SetApp(id int64, slug string, pub *rsa.PublicKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.app = &app{id: id, slug: slug, pub: pub, installations: map[int64]*installation{}, tokens: map[string]appToken{}, tokenTTL: DefaultTokenTTL}
}

// Install installs the App on account for repos (owner/repo; the
// repositories are created when missing) and returns the installation id.
func (s *Server) Install(account string, repos ...string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.id()
	s.app.installations[id] = &installation{id: id, account: account}
	s.setRepos(id, repos)
	return id
}

// SetInstallationRepos replaces the repositories an installation covers.
func (s *Server) SetInstallationRepos(id int64, repos ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.setRepos(id, repos)
}

// setRepos sets an installation's repositories (mu must be held).
func (s *Server) setRepos(id int64, repos []string) {
	in := s.app.installations[id]
	if in == nil {
		return
	}
	in.repos = nil
	for _, r := range repos {
		s.repo(r)
		in.repos = append(in.repos, r)
	}
}

// Uninstall removes an installation; its tokens stop working.
func (s *Server) Uninstall(id int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.app.installations, id)
	for tok, t := range s.app.tokens {
		if t.installation == id {
			delete(s.app.tokens, tok)
		}
	}
}

// RevokeTokens revokes every installation token issued so far (a token
// GitHub stopped honouring before its expires_at).
func (s *Server) RevokeTokens() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.app.tokens)
}

// SetTokenTTL sets the lifetime of the installation tokens issued from now.
func (s *Server) SetTokenTTL(d time.Duration) { s.mu.Lock(); s.app.tokenTTL = d; s.mu.Unlock() }

// TokensIssued counts the installation tokens issued so far.
func (s *Server) TokensIssued() int { s.mu.Lock(); defer s.mu.Unlock(); return s.app.issued }

// AddAppDelivery records a delivery of the App's webhook (a failed one
// when StatusCode is not 2xx) and returns its id.
func (s *Server) AddAppDelivery(d Delivery) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d.StatusCode == 0 {
		d.StatusCode = http.StatusOK
	}
	if d.GUID == "" {
		d.GUID = "00000000-0000-4000-8000-" + strconv.FormatInt(1e11+s.nextID+1, 10)
	}
	st := "OK"
	if d.StatusCode < 200 || d.StatusCode >= 300 {
		st = "Invalid HTTP Response: " + strconv.Itoa(d.StatusCode)
	}
	id := s.id()
	s.app.deliveries = append(s.app.deliveries, &delivery{id: id, guid: d.GUID, deliveredAt: s.tick(),
		status: st, statusCode: d.StatusCode, event: d.Event, action: d.Action})
	return id
}

// AppRedeliveries returns the delivery ids whose redelivery was asked for
// (POST /app/hook/deliveries/{id}/attempts), in order.
func (s *Server) AppRedeliveries() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int64(nil), s.app.redelivered...)
}

// appCredential is what an Authorization header proves to the App routes.
type appCredential struct {
	jwt          bool
	installation int64
}

// appAuth reads an App JWT or an installation token from the header (mu
// must be held); ok is false when it is neither.
func (s *Server) appAuth(h string) (appCredential, bool) {
	if s.app == nil {
		return appCredential{}, false
	}
	_, tok, found := strings.Cut(h, " ")
	if !found {
		return appCredential{}, false
	}
	if t, ok := s.app.tokens[tok]; ok {
		if !s.now.Before(t.expires) {
			return appCredential{}, false
		}
		return appCredential{installation: t.installation}, true
	}
	if strings.Count(tok, ".") == 2 && verifyJWT(tok, s.app.pub, s.app.id, s.now) == nil {
		return appCredential{jwt: true}, true
	}
	return appCredential{}, false
}

// isAppPath reports a path only App credentials may call.
func isAppPath(path string) bool {
	return path == "/app" || strings.HasPrefix(path, "/app/") || strings.HasPrefix(path, "/installation/")
}

// routeApp serves the App routes and the repository routes called with an
// installation token (mu must be held). handled is false for a request
// the ordinary token routes serve.
func (s *Server) routeApp(r *http.Request, path string, body []byte) (reply, bool) {
	cred, ok := s.appAuth(r.Header.Get("Authorization"))
	if !isAppPath(path) && (!ok || cred.jwt) {
		return reply{}, false
	}
	if !ok {
		return jsonReply(http.StatusUnauthorized, msgBody("A JSON web token could not be decoded")), true
	}
	parts := strings.Split(strings.Trim(path, "/"), "/")
	q := r.URL.Query()
	switch {
	case !cred.jwt && path == "/installation/repositories" && r.Method == http.MethodGet:
		return s.installationRepos(cred.installation, q), true
	case !cred.jwt && len(parts) >= 3 && parts[0] == "repos":
		in := s.app.installations[cred.installation]
		if in == nil || !containsFold(in.repos, parts[1]+"/"+parts[2]) {
			return notFound(), true
		}
		return s.route(r, path, body), true
	case cred.jwt && path == "/app" && r.Method == http.MethodGet:
		return jsonReply(http.StatusOK, map[string]any{"id": s.app.id, "slug": s.app.slug, "name": s.app.slug,
			"owner": userJSON(s.viewer), "events": []string{"pull_request", "check_run", "status"}}), true
	case cred.jwt && path == "/app/installations" && r.Method == http.MethodGet:
		return s.listInstallations(q), true
	case cred.jwt && len(parts) == 4 && parts[1] == "installations" && parts[3] == "access_tokens" && r.Method == http.MethodPost:
		return s.issueToken(parts[2]), true
	case cred.jwt && path == "/app/hook/deliveries" && r.Method == http.MethodGet:
		return deliveryPage(s.app.deliveries, path, q), true
	case cred.jwt && len(parts) == 5 && parts[1] == "hook" && parts[2] == "deliveries" && parts[4] == "attempts" && r.Method == http.MethodPost:
		id, err := strconv.ParseInt(parts[3], 10, 64)
		if err != nil || findDelivery(s.app.deliveries, id) == nil {
			return notFound(), true
		}
		s.app.redelivered = append(s.app.redelivered, id)
		return jsonReply(http.StatusAccepted, map[string]any{}), true
	case !cred.jwt && strings.HasPrefix(path, "/app"):
		return jsonReply(http.StatusUnauthorized, msgBody("A JSON web token could not be decoded")), true
	}
	return reply{status: http.StatusNotFound, body: []byte(`{"message":"Not Found"}`), unexpected: true}, true
}

// installationRepos serves GET /installation/repositories (mu must be held).
func (s *Server) installationRepos(id int64, q url.Values) reply {
	in := s.app.installations[id]
	if in == nil {
		return jsonReply(http.StatusUnauthorized, msgBody("Bad credentials"))
	}
	page, _ := paginate(in.repos, q)
	out := []any{}
	for _, name := range page {
		owner, short, _ := strings.Cut(name, "/")
		out = append(out, map[string]any{"id": s.repo(name).id, "name": short, "full_name": name, "owner": map[string]any{"login": owner}, "private": false})
	}
	return jsonReply(http.StatusOK, map[string]any{"total_count": len(in.repos), "repository_selection": "selected", "repositories": out})
}

// listInstallations serves GET /app/installations (mu must be held).
func (s *Server) listInstallations(q url.Values) reply {
	var ids []int64
	for id := range s.app.installations {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	page, _ := paginate(ids, q)
	out := []any{}
	for _, id := range page {
		in := s.app.installations[id]
		out = append(out, map[string]any{"id": id, "app_id": s.app.id, "app_slug": s.app.slug,
			"account": map[string]any{"login": in.account}, "repository_selection": "selected", "suspended_at": nil})
	}
	return jsonReply(http.StatusOK, out)
}

// issueToken serves POST /app/installations/{id}/access_tokens (mu must
// be held).
func (s *Server) issueToken(raw string) reply {
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || s.app.installations[id] == nil {
		return notFound()
	}
	b := make([]byte, 18)
	_, _ = rand.Read(b)
	tok := "ghs_" + hex.EncodeToString(b)
	exp := s.now.Add(s.app.tokenTTL)
	s.app.tokens[tok] = appToken{installation: id, expires: exp}
	s.app.issued++
	return jsonReply(http.StatusCreated, map[string]any{"token": tok, "expires_at": ts(exp),
		"permissions": map[string]string{"pull_requests": "read", "checks": "read", "statuses": "read"}, "repository_selection": "selected"})
}

func containsFold(list []string, s string) bool {
	for _, v := range list {
		if strings.EqualFold(v, s) {
			return true
		}
	}
	return false
}
