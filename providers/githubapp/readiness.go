package githubapp

import (
	"context"

	"github.com/agentproto/sentinel/providers"
)

// Readiness implements providers.ReadinessChecker without a GitHub call:
// the setup fields are stored, the base URL is acceptable and the key file
// is a 0600 PEM of an RSA key.
func (p *Provider) Readiness(ctx context.Context) providers.Readiness {
	r := providers.Readiness{CredentialSource: "github-app setup (App id " + p.appIDOrNone(ctx) + ")"}
	if _, _, err := p.appAuth(ctx); err != nil {
		r.Reason = err.Error()
		r.Fix = setupFix
		return r
	}
	r.Ready = true
	return r
}

func (p *Provider) appIDOrNone(ctx context.Context) string {
	s, err := p.settings(ctx)
	if err != nil || s.appID == "" {
		return "none"
	}
	return s.appID
}
