package github

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/agentproto/sentinel/providers"
)

// TokenRefreshMargin is how long before its expires_at an installation
// token is replaced (GitHub's tokens live an hour).
const TokenRefreshMargin = 5 * time.Minute

// jwtReuse is how long a signed App JWT is reused before a new one is
// signed (well inside AppJWTLifetime).
const jwtReuse = 5 * time.Minute

// AppAuth authenticates as a GitHub App: it signs the App JWT and
// exchanges it for installation tokens (POST
// /app/installations/{id}/access_tokens), each cached in memory until
// TokenRefreshMargin before its expires_at. Tokens and JWTs are never
// logged, stored or put in an error. Safe for concurrent use.
type AppAuth struct {
	sign func(ctx context.Context, now time.Time) (string, time.Time, error)
	app  *Client
	now  func() time.Time

	mu     sync.Mutex
	jwt    string
	jwtExp time.Time
	tokens map[int64]installationToken
}

// installationToken is one cached installation token.
type installationToken struct {
	token   string
	expires time.Time
}

// AppAuthConfig configures an AppAuth.
type AppAuthConfig struct {
	// Sign returns a fresh App JWT and its expiry (SignAppJWT over the
	// App's key), required.
	Sign func(ctx context.Context, now time.Time) (string, time.Time, error)
	// BaseURL is the REST root (default https://api.github.com).
	BaseURL string
	// HTTP is the client requests go through (default as NewClient's).
	HTTP *http.Client
	// Now is the clock (default time.Now): JWT times and token expiry.
	Now func() time.Time
	// Observe, when set, is told the rate-limit headers of every answer
	// (the App credential's), as the Client's.
	Observe RateObserver
	// Hold, when set, pauses the App credential's calls, as the Client's.
	Hold HoldFunc
}

// NewAppAuth returns the App authenticator.
func NewAppAuth(cfg AppAuthConfig) (*AppAuth, error) {
	if cfg.Sign == nil {
		return nil, fmt.Errorf("github app auth: Sign is required")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	a := &AppAuth{sign: cfg.Sign, now: cfg.Now, tokens: map[int64]installationToken{}}
	c, err := NewClient(ClientConfig{BaseURL: cfg.BaseURL, HTTP: cfg.HTTP, Token: appJWTSource{a}, Now: cfg.Now,
		Credential: "app", Observe: cfg.Observe, Hold: cfg.Hold})
	if err != nil {
		return nil, err
	}
	a.app = c
	return a, nil
}

// AppClient returns the client that calls as the App itself (JWT): /app,
// /app/installations, /app/hook/deliveries.
func (a *AppAuth) AppClient() *Client { return a.app }

// appJWTSource is the TokenSource of App calls: the cached JWT, signed again
// when it is older than jwtReuse.
type appJWTSource struct{ a *AppAuth }

// Token implements TokenSource.
func (s appJWTSource) Token(ctx context.Context) (string, error) {
	a := s.a
	now := a.now()
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.jwt != "" && now.Before(a.jwtExp.Add(-AppJWTLifetime+jwtReuse)) {
		return a.jwt, nil
	}
	jwt, exp, err := a.sign(ctx, now)
	if err != nil {
		return "", &providers.Error{Reason: providers.ReasonSetup, Message: err.Error()}
	}
	a.jwt, a.jwtExp = jwt, exp
	return jwt, nil
}

// Invalidate implements TokenSource.
func (s appJWTSource) Invalidate() {
	s.a.mu.Lock()
	s.a.jwt = ""
	s.a.mu.Unlock()
}

// InstallationToken returns a token of the installation: the cached one
// while it has more than TokenRefreshMargin to live, else a new one.
func (a *AppAuth) InstallationToken(ctx context.Context, installation int64) (string, error) {
	now := a.now()
	a.mu.Lock()
	t, ok := a.tokens[installation]
	a.mu.Unlock()
	if ok && now.Before(t.expires.Add(-TokenRefreshMargin)) {
		return t.token, nil
	}
	path := "app/installations/" + strconv.FormatInt(installation, 10) + "/access_tokens"
	_, _, body, err := a.app.API(ctx, http.MethodPost, path, nil)
	if err != nil {
		return "", fmt.Errorf("installation token of installation %d: %w", installation, err)
	}
	var out struct {
		Token     string    `json:"token"`
		ExpiresAt time.Time `json:"expires_at"`
	}
	if err := json.Unmarshal(body, &out); err != nil || out.Token == "" {
		return "", &providers.Error{Reason: providers.ReasonInvalid, Message: fmt.Sprintf("installation token of installation %d: GitHub's answer holds no token", installation)}
	}
	a.mu.Lock()
	a.tokens[installation] = installationToken{token: out.Token, expires: out.ExpiresAt}
	a.mu.Unlock()
	return out.Token, nil
}

// forget drops an installation's cached token (after a 401).
func (a *AppAuth) forget(installation int64) {
	a.mu.Lock()
	delete(a.tokens, installation)
	a.mu.Unlock()
}

// Installation returns the TokenSource of one installation, for a Client
// whose calls spend that installation's quota.
func (a *AppAuth) Installation(id int64) TokenSource { return installationSource{a: a, id: id} }

// installationSource is an installation's TokenSource.
type installationSource struct {
	a  *AppAuth
	id int64
}

// Token implements TokenSource.
func (s installationSource) Token(ctx context.Context) (string, error) {
	return s.a.InstallationToken(ctx, s.id)
}

// Invalidate implements TokenSource.
func (s installationSource) Invalidate() { s.a.forget(s.id) }
