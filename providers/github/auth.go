package github

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/agentproto/sentinel/providers"
)

// DefaultHost is the public GitHub host.
const DefaultHost = "github.com"

// APIBase returns the REST root for host: https://api.github.com for
// github.com, https://<host>/api/v3 for an enterprise host.
func APIBase(host string) string {
	host = strings.TrimSuffix(strings.TrimSpace(host), "/")
	if host == "" || strings.EqualFold(host, DefaultHost) || strings.EqualFold(host, "api.github.com") {
		return "https://api.github.com"
	}
	return "https://" + host + "/api/v3"
}

// TokenSource provides the credential of the in-process client.
type TokenSource interface {
	// Token returns the current token, reading it once and caching it.
	Token(ctx context.Context) (string, error)
	// Invalidate drops the cached token so the next Token re-reads it
	// (called after a 401).
	Invalidate()
}

// Auth is the TokenSource backed by the host's gh setup: `gh auth token`
// (with --hostname for a host other than github.com). The token is cached
// in memory only; it is never logged, persisted or put in an error.
type Auth struct {
	runner *Runner
	host   string

	mu    sync.Mutex
	token string
}

// NewAuth returns the gh-backed token source for host ("" means the
// runner's host: GH_HOST, else github.com).
func NewAuth(r *Runner, host string) *Auth {
	if host == "" {
		host = r.Host()
	}
	return &Auth{runner: r, host: host}
}

// Host returns the host the token is for.
func (a *Auth) Host() string { return a.host }

// Token implements TokenSource. A missing gh is a setup error naming the
// install fix; gh without credentials is an auth error naming
// `gh auth login`.
func (a *Auth) Token(ctx context.Context) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.token != "" {
		return a.token, nil
	}
	tok, err := ReadToken(ctx, a.runner, a.host)
	if err != nil {
		return "", err
	}
	a.token = tok
	return tok, nil
}

// Invalidate implements TokenSource.
func (a *Auth) Invalidate() {
	a.mu.Lock()
	a.token = ""
	a.mu.Unlock()
}

// ReadToken runs `gh auth token` (with --hostname for a host other than
// github.com) and returns the token it prints.
func ReadToken(ctx context.Context, r *Runner, host string) (string, error) {
	args := []string{"auth", "token"}
	if host != "" && !strings.EqualFold(host, DefaultHost) {
		args = append(args, "--hostname", host)
	}
	stdout, _, err := r.Run(ctx, nil, args...)
	if err != nil {
		var ee *ExitError
		if errors.As(err, &ee) {
			return "", &providers.Error{
				Reason:  providers.ReasonAuth,
				Message: fmt.Sprintf("gh is not authenticated to %s (%s): %s", hostOrDefault(host), ee.Stderr, LoginHint),
				Err:     err,
			}
		}
		return "", err
	}
	tok := strings.TrimSpace(string(stdout))
	if tok == "" || strings.ContainsAny(tok, " \t\r\n") {
		return "", &providers.Error{
			Reason:  providers.ReasonAuth,
			Message: fmt.Sprintf("gh auth token printed no usable token for %s: %s", hostOrDefault(host), LoginHint),
		}
	}
	return tok, nil
}

func hostOrDefault(h string) string {
	if h == "" {
		return DefaultHost
	}
	return h
}

// StaticToken is a fixed TokenSource, for tests and for hosts that inject
// a token some other way.
type StaticToken string

// Token implements TokenSource.
func (s StaticToken) Token(context.Context) (string, error) {
	if s == "" {
		return "", &providers.Error{Reason: providers.ReasonAuth, Message: "no GitHub token: " + LoginHint}
	}
	return string(s), nil
}

// Invalidate implements TokenSource; a static token cannot be re-read.
func (StaticToken) Invalidate() {}
