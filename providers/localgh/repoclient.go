package localgh

import (
	"context"
	"strings"

	"github.com/agentproto/sentinel/providers/github"
)

// RepoClientFunc returns the client whose credential should carry calls on
// one repository (owner/repo), or ok false for the default client: the
// node wires the GitHub App's installation clients here, so polls of a
// repository the App covers spend that installation's quota, not the
// user's.
type RepoClientFunc func(ctx context.Context, repo string) (*github.Client, bool)

// clientFor is the client of a REST path: the repository's own
// (Config.RepoClient) for repos/{owner}/{repo}/..., else Config.Client.
func (p *Provider) clientFor(ctx context.Context, path string) *github.Client {
	if p.cfg.RepoClient == nil {
		return p.cfg.Client
	}
	rest, ok := strings.CutPrefix(strings.TrimPrefix(path, "/"), "repos/")
	if !ok {
		return p.cfg.Client
	}
	parts := strings.SplitN(rest, "/", 3)
	if len(parts) < 2 || parts[0] == "" || parts[1] == "" {
		return p.cfg.Client
	}
	if c, ok := p.cfg.RepoClient(ctx, parts[0]+"/"+parts[1]); ok && c != nil {
		return c
	}
	return p.cfg.Client
}
