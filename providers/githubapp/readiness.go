package githubapp

import (
	"context"

	"github.com/agentproto/sentinel/providers"
)

// Readiness implements providers.ReadinessChecker without a GitHub call:
// the setup fields are stored, the base URL is acceptable and the key file
// is a 0600 PEM of an RSA key.
func (p *Provider) Readiness(ctx context.Context) providers.Readiness {
	r := providers.Readiness{CredentialSource: p.sourceOf(ctx)}
	if _, _, err := p.appAuth(ctx); err != nil {
		r.Reason = err.Error()
		r.Fix = setupFix
		return r
	}
	r.Ready = true
	return r
}

// sourceOf names where the setup comes from: the stored setup, or the
// node's config (github.app), with the App id.
func (p *Provider) sourceOf(ctx context.Context) string {
	s, err := p.settings(ctx)
	id := s.appID
	if err != nil || id == "" {
		id = "none"
	}
	if err == nil && s.preset {
		return "node config github.app (App id " + id + ")"
	}
	return "github-app setup (App id " + id + ")"
}
