package localgh

import (
	"context"
	"errors"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
)

// Reachable implements providers.ReachChecker: at create, one GET of what
// the first poll reads (the PR, or the repository's pull list; the
// client's ETag cache keeps it for that poll), with the client the polls
// use (an App installation's for a repository it covers, clientFor),
// tells whether those credentials reach the repository. Only a definite answer (404, 403, 401) is a
// problem; a provider that is not ready (its own warning), a network or a
// server failure cannot tell.
func (p *Provider) Reachable(ctx context.Context, spec sentinel.Spec) (problem, fix string) {
	if p.cfg.Client == nil || len(spec.Match) != 1 || !p.Readiness(ctx).Ready {
		return "", ""
	}
	ref, err := sentinel.ParseGitHubSubject(spec.Match[0].Subject)
	if err != nil || ref.Repo == "" {
		return "", ""
	}
	path := repoPath(ref, "/pulls?state=all&sort=updated&direction=desc&per_page=%d", repoListSize)
	if ref.Number > 0 {
		path = repoPath(ref, "/pulls/%d", ref.Number)
	}
	_, err = p.clientFor(ctx, path).Get(ctx, path)
	var pe *providers.Error
	if err == nil || !errors.As(err, &pe) {
		return "", ""
	}
	switch pe.Reason {
	case providers.ReasonNotFound, providers.ReasonForbidden, providers.ReasonAuth:
		return "github:" + ref.FullName() + " is not reachable with local-gh's credentials (" + pe.Message + "), so nothing will be delivered",
			p.cfg.Credentials.Hint() + "; check the repository name and that the account can read it"
	}
	return "", ""
}

var _ providers.ReachChecker = (*Provider)(nil)
