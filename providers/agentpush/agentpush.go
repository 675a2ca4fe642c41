package agentpush

import (
	"context"
	"strings"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
)

// Provider is the agentpush provider. It holds no per-sentinel state: every
// sentinel's subscription id, mode, hook key and callback secret live in its
// handle. It is safe for concurrent use.
type Provider struct {
	cfg Config
}

// New returns an agentpush provider.
func New(cfg Config) *Provider {
	cfg.setDefaults()
	return &Provider{cfg: cfg}
}

// Info implements providers.Provider.
func (p *Provider) Info() providers.Info {
	return providers.Info{
		Slug:        Slug,
		Name:        "agentpush",
		Version:     "1.0.0",
		Description: "hosted durable subscriptions (poll + ack by seq, or signed push)",
	}
}

// Capabilities implements providers.Provider (AIP-60 provider capabilities).
func (p *Provider) Capabilities() providers.Capabilities {
	return providers.Capabilities{
		Subjects:         []string{"*"},
		Push:             true,
		Poll:             true,
		Durable:          true,
		NeedsPublicURL:   false,
		RequiresAuth:     true,
		TypicalLatencyMs: 15000,
	}
}

// ExclusiveRemote reports that each handle owns its own subscription, so
// the runtime may cancel remotes through tombstones.
func (p *Provider) ExclusiveRemote() bool { return true }

// DefaultTypes implements providers.Provider: the PR set for github:
// subjects, every type ("*") otherwise.
func (p *Provider) DefaultTypes(subject string) []string {
	if strings.HasPrefix(subject, "github:") {
		return sentinel.DefaultPRTypes()
	}
	return []string{"*"}
}

// SetupFields implements providers.SetupFielder.
func (p *Provider) SetupFields() []providers.SetupField {
	return []providers.SetupField{
		{Name: FieldAPIKey, Required: true, Sensitive: true,
			Description: "agentpush workspace API key; stored in the daemon's credential store and never returned"},
		{Name: FieldBaseURL, Endpoint: true,
			Description: "agentpush API base URL (default " + DefaultBaseURL + "); https only (http only to a loopback host). The apiKey is bound to it: changing it needs apiKey again in the same setup, and a new apiKey needs it restated once it is set"},
		{Name: FieldDelivery,
			Description: "poll (default) or push; push needs an https public URL for the daemon and otherwise falls back to poll"},
	}
}

// Readiness implements providers.ReadinessChecker. It is offline: a stored
// key and a secure base URL mean ready; a wrong or revoked key surfaces on
// create.
func (p *Provider) Readiness(ctx context.Context) providers.Readiness {
	s, err := p.settings(ctx)
	if err != nil {
		return providers.Readiness{Reason: err.Error()}
	}
	if s.apiKey == "" {
		return providers.Readiness{Reason: notReadyReason}
	}
	if err := s.checkBaseURL(); err != nil {
		return providers.Readiness{Reason: err.Error()}
	}
	return providers.Readiness{Ready: true}
}

// Interface guards.
var (
	_ providers.Provider          = (*Provider)(nil)
	_ providers.Poller            = (*Provider)(nil)
	_ providers.InboundParser     = (*Provider)(nil)
	_ providers.ReadinessChecker  = (*Provider)(nil)
	_ providers.SetupFielder      = (*Provider)(nil)
	_ providers.DeliveryPreferrer = (*Provider)(nil)
)
