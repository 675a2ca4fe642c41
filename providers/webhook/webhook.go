package webhook

import (
	"sync"
	"time"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/github"
)

// Slug is the provider's slug.
const Slug = "webhook"

// Source is the CloudEvents source of the events this provider emits.
const Source = "//agentproto.local/sentinel/webhook"

// Provider is the webhook provider. It is safe for concurrent use; several
// instances (one per node) may share one Store and Locker.
type Provider struct {
	cfg Config

	mu sync.Mutex
	// verified remembers, per repository key, the origin a hook was last
	// seen pointing at and when, so that sentinels sharing a hook re-attach
	// with one GET instead of one each. mu guards it.
	verified map[string]verifiedHook
	// self is the identity gh acts as, for the loop shield (SelfCaused).
	self *github.Self
	// lookup answers what payloads do not say (a fork PR of a commit, a
	// review's inline comments).
	lookup *github.HeadLookup
}

// verifiedHook is a hook this process saw live and pointing at url.
type verifiedHook struct {
	url string
	at  time.Time
}

// New returns the provider, or an error naming the missing dependencies.
func New(cfg Config) (*Provider, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	self := &github.Self{Fetch: github.RunnerUser(cfg.Runner), Fallback: cfg.SelfLogin, Now: cfg.Now}
	return &Provider{cfg: cfg, verified: map[string]verifiedHook{}, self: self, lookup: github.NewHeadLookup(cfg.Runner, cfg.Now)}, nil
}

// Info returns the provider's metadata.
func (p *Provider) Info() providers.Info {
	return providers.Info{
		Slug:        Slug,
		Name:        "GitHub webhook",
		Version:     "1.0.0",
		Description: "GitHub repository hooks created through the host's gh CLI, pushed to this daemon's public URL",
	}
}

// Capabilities returns the declared capabilities (AIP-60 provider capabilities).
func (p *Provider) Capabilities() providers.Capabilities {
	return providers.Capabilities{
		Subjects:         []string{"github"},
		Push:             true,
		NeedsPublicURL:   true,
		TypicalLatencyMs: 2000,
	}
}

// DefaultTypes returns the GitHub PR default set for any subject the
// provider accepts (github:o/r, github:o/r*, github:o/r#N), else none.
func (p *Provider) DefaultTypes(subject string) []string {
	if _, err := github.ClauseRepository(subject); err != nil {
		return []string{}
	}
	return sentinel.DefaultPRTypes()
}

// Interface guards.
var (
	_ providers.Provider         = (*Provider)(nil)
	_ providers.InboundParser    = (*Provider)(nil)
	_ providers.ReadinessChecker = (*Provider)(nil)
	_ providers.Reconciler       = (*Provider)(nil)
)
