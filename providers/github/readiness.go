package github

import (
	"context"
	"errors"
	"time"

	"github.com/agentproto/sentinel/providers"
)

// ReadinessTimeout bounds one readiness probe.
const ReadinessTimeout = 10 * time.Second

// Readiness reports whether the host's gh setup can be used: gh is
// installed and `gh auth token` yields a token for host ("" means the
// runner's host). It is offline (no request to GitHub) and never reports a
// false ready: any failure is not ready, with a reason naming the fix
// ("install the GitHub CLI (gh)", "run gh auth login").
func Readiness(ctx context.Context, r *Runner, host string) providers.Readiness {
	if r == nil {
		return providers.Readiness{Reason: "no gh runner configured: " + InstallHint, Fix: InstallHint}
	}
	if _, err := r.LookPath(); err != nil {
		return providers.Readiness{Reason: err.Error(), Fix: InstallHint}
	}
	if host == "" {
		host = r.Host()
	}
	ctx, cancel := context.WithTimeout(ctx, ReadinessTimeout)
	defer cancel()
	if _, err := ReadToken(ctx, r, host); err != nil {
		var pe *providers.Error
		if errors.As(err, &pe) && pe.Reason == providers.ReasonSetup {
			return providers.Readiness{Reason: pe.Error(), Fix: LoginHint + " (or set GH_TOKEN)"}
		}
		return providers.Readiness{Reason: "gh is not authenticated to " + host + ": " + LoginHint, Fix: LoginHint + " --hostname " + host + " (or set GH_TOKEN)"}
	}
	return providers.Readiness{Ready: true}
}
