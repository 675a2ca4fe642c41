package agentpush

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/agentproto/sentinel/providers"
)

// Slug is the provider's slug and the credential-store key.
const Slug = "agentpush"

// DefaultBaseURL is the hosted agentpush API.
const DefaultBaseURL = "https://api.agentpush.io"

// DefaultTimeout bounds every HTTP request to the agentpush API.
const DefaultTimeout = 15 * time.Second

// Setup field names, as stored by setup_sentinel_provider.
const (
	FieldAPIKey   = "apiKey"
	FieldBaseURL  = "baseUrl"
	FieldDelivery = "delivery"
)

// notReadyReason is the actionable message for a missing API key.
const notReadyReason = "agentpush needs a workspace API key: run setup_sentinel_provider (provider agentpush, field apiKey)"

// Config configures the provider. Every field is optional.
type Config struct {
	// Creds returns the stored setup fields (apiKey, baseUrl, delivery). It is
	// read on every call, so a new setup takes effect without a restart.
	Creds providers.CredentialSource
	// PublicURL resolves the daemon's public origin (push callbacks).
	PublicURL providers.PublicURLFunc
	// HTTPClient performs API requests (default: a client with a 15 s
	// timeout). Each request is also bounded by Timeout through its ctx.
	HTTPClient *http.Client
	// BaseURL overrides the stored baseUrl setup field (tests, config).
	BaseURL string
	// Timeout bounds one API request (default 15 s).
	Timeout time.Duration
	// Now is the clock used for signature skew checks (default time.Now).
	Now func() time.Time
	// Log receives operational messages; it never sees the API key.
	Log *slog.Logger
}

func (c *Config) setDefaults() {
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{Timeout: c.Timeout}
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	if c.PublicURL == nil {
		c.PublicURL = func() providers.PublicURL { return providers.PublicURL{} }
	}
}

// settings are the resolved setup fields of one call.
type settings struct {
	apiKey   string
	baseURL  string
	delivery string
}

// settings reads the credential source. A missing source or a missing key
// yields an empty apiKey, never an error; a failing source is an error that
// does not carry the stored values.
func (p *Provider) settings(ctx context.Context) (settings, error) {
	var fields map[string]string
	if p.cfg.Creds != nil {
		var err error
		fields, err = p.cfg.Creds.Credentials(ctx, Slug)
		if err != nil {
			return settings{}, fmt.Errorf("read agentpush credentials: %w", err)
		}
	}
	s := settings{
		apiKey:   strings.TrimSpace(fields[FieldAPIKey]),
		baseURL:  strings.TrimSpace(fields[FieldBaseURL]),
		delivery: strings.ToLower(strings.TrimSpace(fields[FieldDelivery])),
	}
	if o := strings.TrimSpace(p.cfg.BaseURL); o != "" {
		s.baseURL = o
	}
	if s.baseURL == "" {
		s.baseURL = DefaultBaseURL
	}
	s.baseURL = strings.TrimRight(s.baseURL, "/")
	return s, nil
}

// client returns an API client for the stored key, or a setup error naming
// the fix when no key is stored or the base URL would carry it in clear.
func (p *Provider) client(ctx context.Context) (*client, settings, error) {
	s, err := p.settings(ctx)
	if err != nil {
		return nil, s, &providers.Error{Reason: providers.ReasonSetup, Message: err.Error(), Err: err}
	}
	if s.apiKey == "" {
		return nil, s, providers.SetupError("%s", notReadyReason)
	}
	if err := s.checkBaseURL(); err != nil {
		return nil, s, err
	}
	return &client{
		http:    p.cfg.HTTPClient,
		baseURL: s.baseURL,
		key:     s.apiKey,
		timeout: p.cfg.Timeout,
		now:     p.cfg.Now,
	}, s, nil
}

// checkBaseURL refuses a base URL the key must not be sent to (plain http
// to a host that is not loopback), whatever stored or configured it: the
// setup service refuses such a value, and this check keeps a value stored
// before that rule, or set in the config, from carrying the key in clear.
func (s settings) checkBaseURL() *providers.Error {
	if err := providers.CheckSecureURL(s.baseURL); err != nil {
		return providers.SetupError("agentpush base URL refused, the API key is not sent to it: %v: run setup_sentinel_provider (provider agentpush) with an https baseUrl and the apiKey", err)
	}
	return nil
}
