package webhook

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/github"
)

// hookScopes are the OAuth scopes that allow managing repository hooks.
var hookScopes = []string{"admin:repo_hook", "write:repo_hook", "repo"}

// readinessTimeout bounds the readiness probe.
const readinessTimeout = 10 * time.Second

// Readiness reports whether webhook sentinels can be created now: a public
// URL is known (https, or http to loopback, or any http with
// Config.AllowHTTP), the credentials work (gh installed and authenticated,
// or a token from GH_TOKEN / GITHUB_TOKEN that GitHub accepts), and the
// token's OAuth scopes (the X-OAuth-Scopes header of GET /user) include
// admin:repo_hook, write:repo_hook or repo. A token whose scopes are not
// listed (fine-grained, App) is allowed through; create fails later if it
// lacks access. CredentialSource names the source. Every reason names the
// fix. It never panics.
func (p *Provider) Readiness(ctx context.Context) (r providers.Readiness) {
	src := p.cfg.source()
	defer func() {
		if v := recover(); v != nil {
			r = providers.Readiness{Reason: "webhook readiness probe failed"}
		}
		r.CredentialSource = src
	}()
	if _, perr := p.usableOrigin(providers.Delivery{}); perr != nil {
		return providers.Readiness{Reason: perr.Error()}
	}
	ctx, cancel := context.WithTimeout(ctx, readinessTimeout)
	defer cancel()
	status, header, _, err := p.cfg.Runner.API(ctx, http.MethodGet, "user", nil)
	switch {
	case errors.Is(err, github.ErrGHNotInstalled):
		return providers.Readiness{Reason: "the GitHub CLI (gh) is not installed: " + github.InstallHint + ", or set GH_TOKEN"}
	case err != nil && src != github.SourceGH && (providers.ReasonOf(err) == providers.ReasonAuth || status == http.StatusUnauthorized):
		return providers.Readiness{Reason: "GitHub rejected the token from " + src + " (" + err.Error() + ")"}
	case err != nil && (providers.ReasonOf(err) == providers.ReasonAuth || status == http.StatusUnauthorized):
		return providers.Readiness{Reason: "gh is not authenticated (" + err.Error() + "): " + github.LoginHint}
	case err != nil && src != github.SourceGH:
		return providers.Readiness{Reason: "GitHub cannot be reached (" + err.Error() + "): check the network and github.api_url"}
	case err != nil:
		return providers.Readiness{Reason: "gh cannot reach GitHub (" + err.Error() + "): check gh auth status"}
	}
	scopes := strings.TrimSpace(header.Get("X-OAuth-Scopes"))
	if scopes == "" {
		return providers.Readiness{Ready: true}
	}
	for _, s := range strings.Split(scopes, ",") {
		for _, want := range hookScopes {
			if strings.TrimSpace(s) == want {
				return providers.Readiness{Ready: true}
			}
		}
	}
	return providers.Readiness{Reason: "the " + src + " token's scopes (" + scopes + ") cannot manage repository hooks (needs admin:repo_hook, write:repo_hook or repo): " + p.cfg.scopeFix()}
}
