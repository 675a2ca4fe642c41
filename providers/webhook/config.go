package webhook

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/github"
)

// Runner makes one GitHub REST call through gh (github.Runner.API): path is
// relative to the REST root, body (nil for none) goes to gh on stdin. A
// status >= 400 comes back with a classified *providers.Error; status 0
// means gh got no HTTP response (not installed, not authenticated,
// network).
type Runner interface {
	API(ctx context.Context, method, path string, body []byte) (status int, header http.Header, respBody []byte, err error)
}

// Config configures the provider.
type Config struct {
	// Runner makes the REST calls (required): the gh runner, or, with a
	// token from the environment, the in-process github.Client (its API
	// method), so no gh is needed.
	Runner Runner
	// Credentials say where the token comes from, for readiness
	// (CredentialSource) and for the fixes errors name; nil means gh.
	Credentials *github.Credentials
	// Store keeps the hook records (required); it holds the HMAC secrets.
	Store providers.KV
	// Locker serializes changes per repository across nodes (required).
	Locker providers.Locker
	// PublicURL resolves the daemon's public origin at call time (required).
	PublicURL providers.PublicURLFunc
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Log receives operational messages (default: discarded). It never
	// receives a secret.
	Log *slog.Logger
	// ReconcileEvery is the least time between two reconciliation passes of
	// one hook, however many sentinels share it (default 1 minute).
	ReconcileEvery time.Duration
	// MaxRedeliveries caps the redeliveries one pass requests (default 50).
	MaxRedeliveries int
	// AllowHTTP accepts a plain-http public URL that is not loopback
	// (config public_url_allow_http). Without it such a URL is refused:
	// GitHub would send the deliveries, and this daemon's hook URLs, in
	// clear, for anyone on the path to capture and replay.
	AllowHTTP bool
	// SelfLogin is the GitHub login gh acts as when GET /user is refused
	// (config github.self_login); events it caused are marked SelfCaused.
	SelfLogin string
}

// Defaults.
const (
	DefaultReconcileEvery  = time.Minute
	DefaultMaxRedeliveries = 50
)

// Validate reports a missing dependency.
func (c *Config) Validate() error {
	var errs []error
	if c.Runner == nil {
		errs = append(errs, errors.New("webhook: Runner is required"))
	}
	if c.Store == nil {
		errs = append(errs, errors.New("webhook: Store is required"))
	}
	if c.Locker == nil {
		errs = append(errs, errors.New("webhook: Locker is required"))
	}
	if c.PublicURL == nil {
		errs = append(errs, errors.New("webhook: PublicURL is required"))
	}
	return errors.Join(errs...)
}

// source is where the token comes from (github.SourceGH by default).
func (c *Config) source() string {
	if c.Credentials == nil {
		return github.SourceGH
	}
	return c.Credentials.Source
}

// scopeFix names how to give the token the hook scope.
func (c *Config) scopeFix() string {
	if c.source() == github.SourceGH {
		return ScopeFix
	}
	return "give the token in " + c.source() + " the admin:repo_hook scope (or, fine-grained, Webhooks: write)"
}

func (c *Config) setDefaults() {
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Log == nil {
		c.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if c.ReconcileEvery <= 0 {
		c.ReconcileEvery = DefaultReconcileEvery
	}
	if c.MaxRedeliveries <= 0 {
		c.MaxRedeliveries = DefaultMaxRedeliveries
	}
}
