package localgh

import (
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/agentproto/sentinel/providers/github"
)

// Slug is the provider's slug.
const Slug = "local-gh"

// Source is the CloudEvents source of every local-gh event.
const Source = "//agentproto.local/sentinel/local-gh"

// Backoff after failed polls: BackoffBase doubling per consecutive
// failure, capped at BackoffMax.
const (
	BackoffBase = 30 * time.Second
	BackoffMax  = 300 * time.Second
)

// Config configures the provider.
type Config struct {
	// Runner runs gh for readiness and credentials (default: gh on PATH with
	// the process environment).
	Runner *github.Runner
	// Credentials say where the token comes from (gh, GH_TOKEN or
	// GITHUB_TOKEN: github.ResolveCredentials) and the REST root; nil means
	// gh through Runner (github.GHCredentials).
	Credentials *github.Credentials
	// Client is the in-process REST client. When nil one is built over
	// Credentials and HTTP.
	Client *github.Client
	// RepoClient, when set, picks another client for calls on a
	// repository (repoclient.go: the GitHub App's installation client for
	// the repositories it covers); Client serves the rest.
	RepoClient RepoClientFunc
	// HTTP is the http.Client used when Client is nil (default: one with a
	// 30 s timeout over the default transport).
	HTTP *http.Client
	// Now is the clock for backoff (default time.Now).
	Now func() time.Time
	// Logger receives poll failures (default: discard).
	Logger *slog.Logger
	// SelfLogin is the GitHub login the credential acts as when GET /user
	// is refused (config github.self_login); events it caused are marked
	// SelfCaused.
	SelfLogin string
	// Self resolves that identity (default: GET /user through Client,
	// cached, else SelfLogin).
	Self *github.Self
}

// withDefaults fills the defaults and builds the client.
func (c Config) withDefaults() (Config, error) {
	if c.Runner == nil {
		c.Runner = github.NewRunner(github.Config{})
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Credentials == nil {
		c.Credentials = github.GHCredentials(c.Runner)
	}
	if c.Client == nil {
		cl, err := github.NewClient(github.ClientConfig{
			BaseURL: c.Credentials.APIBase, Token: c.Credentials.Token, HTTP: c.HTTP, Now: c.Now,
		})
		if err != nil {
			return c, err
		}
		c.Client = cl
	}
	if c.Client == nil {
		return c, errors.New("local-gh: no GitHub client")
	}
	if c.Self == nil {
		c.Self = &github.Self{Fetch: github.ClientUser(c.Client), Fallback: c.SelfLogin, Now: c.Now}
	}
	return c, nil
}
