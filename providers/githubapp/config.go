package githubapp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/github"
)

// Setup field names, as stored by setup_sentinel_provider.
const (
	FieldAppID          = "appId"
	FieldPrivateKeyFile = "privateKeyFile"
	FieldWebhookSecret  = "webhookSecret"
	FieldBaseURL        = "baseUrl"
)

// Defaults.
const (
	DefaultCoverageTTL     = 10 * time.Minute
	DefaultReconcileEvery  = time.Minute
	DefaultMaxRedeliveries = 50
)

// Config configures the provider.
type Config struct {
	// Creds returns the stored setup fields (required). It is read on
	// every call, so a new setup takes effect without a restart.
	Creds providers.CredentialSource
	// Store keeps the covered repositories and the reconciliation state
	// (required; keys under "githubapp.").
	Store providers.KV
	// HTTP is the client GitHub calls go through (default: 30 s timeout
	// over http.DefaultTransport).
	HTTP *http.Client
	// BaseURL overrides the stored baseUrl (tests, config).
	BaseURL string
	// Preset is the App's setup from the node's config (github.app: the
	// environment, AGENTPROTO_GITHUB_APP_*, its webhook secret from a file
	// through AGENTPROTO_GITHUB_APP_WEBHOOK_SECRET_FILE), used while no
	// setup is stored through the API; a stored setup replaces it whole.
	Preset Preset
	// Now is the clock (default time.Now): JWT times, token expiry,
	// coverage age.
	Now func() time.Time
	// Log receives operational messages; never a key, a JWT or a token.
	Log *slog.Logger
	// Observe, when set, is told the rate-limit headers of every GitHub
	// answer, with credentials named "app" and "installation:<id>".
	Observe github.RateObserver
	// Hold, when set, says until when a credential ("app",
	// "installation:<id>") is paused cluster-wide by a secondary limit:
	// every call on it (coverage listings, token mints, head lookups,
	// reconciliation, polls) is refused without a request until then.
	Hold github.HoldFunc
	// CoverageTTL is how long a full listing of the covered repositories
	// is trusted before a watch on an unknown repository lists again
	// (default 10 minutes).
	CoverageTTL time.Duration
	// ReconcileEvery is the least time between two reconciliation passes
	// of the App's webhook, however many sentinels ask (default 1 minute).
	ReconcileEvery time.Duration
	// MaxRedeliveries caps the redeliveries one pass requests (default 50).
	MaxRedeliveries int
}

// Validate reports a missing dependency.
func (c *Config) Validate() error {
	var errs []error
	if c.Creds == nil {
		errs = append(errs, errors.New("github-app: Creds is required"))
	}
	if c.Store == nil {
		errs = append(errs, errors.New("github-app: Store is required"))
	}
	return errors.Join(errs...)
}

func (c *Config) setDefaults() {
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	if c.CoverageTTL <= 0 {
		c.CoverageTTL = DefaultCoverageTTL
	}
	if c.ReconcileEvery <= 0 {
		c.ReconcileEvery = DefaultReconcileEvery
	}
	if c.MaxRedeliveries <= 0 {
		c.MaxRedeliveries = DefaultMaxRedeliveries
	}
}

// SetupFields implements providers.SetupFielder. The key file path and the
// webhook secret are sensitive: a new baseUrl must come with both again
// (the App's JWTs never follow a new URL by themselves).
func (p *Provider) SetupFields() []providers.SetupField {
	return []providers.SetupField{
		{Name: FieldAppID, Description: "the GitHub App's numeric id (its settings page, \"App ID\")", Required: true},
		{Name: FieldPrivateKeyFile, Description: "path of the App's private key (the PEM GitHub generated), a file of mode 0600 readable by the daemon", Required: true, Sensitive: true},
		{Name: FieldWebhookSecret, Description: "the App's webhook secret (its settings page, \"Webhook secret\")", Required: true, Sensitive: true},
		{Name: FieldBaseURL, Description: "REST base URL for GitHub Enterprise Server (https://HOST/api/v3); empty for github.com", Endpoint: true},
	}
}

// Preset is an App setup given by the node's config instead of
// `sentinel setup`. Empty AppID: none.
type Preset struct {
	// AppID, PrivateKeyFile and WebhookSecret are the setup fields of the
	// same names (the key file must be 0600, as a stored one).
	AppID, PrivateKeyFile, WebhookSecret string
	// BaseURL is the REST root (empty: github.com's).
	BaseURL string
}

// setupFix names the setup command.
const setupFix = "run `sentinel setup github-app --field appId=ID --field privateKeyFile=/path/key.pem --field webhookSecret=-` (operator scope), then install the App on the repositories to watch"

// settings are the resolved setup fields of one call.
type settings struct {
	appID, keyFile, secret, baseURL string
	// preset is true when they come from the node's config (Preset).
	preset bool
}

// complete reports whether the required fields are there.
func (s settings) complete() bool { return s.appID != "" && s.keyFile != "" && s.secret != "" }

// settings reads the credential source; an error never carries a value.
func (p *Provider) settings(ctx context.Context) (settings, error) {
	fields, err := p.cfg.Creds.Credentials(ctx, Slug)
	if err != nil {
		return settings{}, fmt.Errorf("read github-app setup: %w", err)
	}
	s := settings{
		appID:   strings.TrimSpace(fields[FieldAppID]),
		keyFile: strings.TrimSpace(fields[FieldPrivateKeyFile]),
		secret:  fields[FieldWebhookSecret],
		baseURL: strings.TrimRight(strings.TrimSpace(fields[FieldBaseURL]), "/"),
	}
	if pr := p.cfg.Preset; s.appID == "" && strings.TrimSpace(pr.AppID) != "" {
		s = settings{appID: strings.TrimSpace(pr.AppID), keyFile: strings.TrimSpace(pr.PrivateKeyFile), secret: pr.WebhookSecret,
			baseURL: strings.TrimRight(strings.TrimSpace(pr.BaseURL), "/"), preset: true}
	}
	if o := strings.TrimSpace(p.cfg.BaseURL); o != "" {
		s.baseURL = strings.TrimRight(o, "/")
	}
	if s.baseURL == "" {
		s.baseURL = github.APIBase(github.DefaultHost)
	}
	return s, nil
}

// ErrKeyFileMode is wrapped by the setup error of a private key file that
// others than its owner may read.
var ErrKeyFileMode = errors.New("github-app private key file is readable by group or others")

// readKey reads and parses the private key file. The file must be a
// regular file of mode 0600 or stricter; errors name the path and the fix,
// never the content.
func readKey(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, providers.SetupError("github-app private key file %s cannot be read: %v: %s", path, errors.Unwrap(err), setupFix)
	}
	if !fi.Mode().IsRegular() {
		return nil, providers.SetupError("github-app private key file %s is not a regular file: %s", path, setupFix)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		e := providers.SetupError("github-app private key file %s has mode %04o: run `chmod 600 %s` (the key must be readable by its owner only)", path, fi.Mode().Perm(), path)
		e.Err = ErrKeyFileMode
		return nil, e
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, providers.SetupError("github-app private key file %s cannot be read: %v", path, errors.Unwrap(err))
	}
	return b, nil
}
