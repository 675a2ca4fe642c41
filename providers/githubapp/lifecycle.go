package githubapp

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/github"
)

// ErrNotInstalled is wrapped by the create error of a watch on a
// repository the App is not installed on.
var ErrNotInstalled = errors.New("the GitHub App is not installed on the repository")

// ErrUnsupportedSubject is wrapped by a create error for a clause subject
// that is not github:owner/repo, github:owner/repo* or github:owner/repo#N
// (the subjects of every webhook-fed GitHub provider).
var ErrUnsupportedSubject = github.ErrUnsupportedSubject

// ErrSeveralRepositories is wrapped by a create error for a spec whose
// clauses name more than one repository.
var ErrSeveralRepositories = github.ErrSeveralRepositories

// notInstalled is the error naming the fix for repo.
func notInstalled(repo string) *providers.Error {
	e := providers.SetupError("the GitHub App is not installed on %s: install the App on that repository (the App's page on GitHub, Configure, Repository access), then watch again", repo)
	e.Err = ErrNotInstalled
	return e
}

// Create checks that the App covers the spec's repository and returns the
// handle bound to the App's route. Nothing is created on GitHub: the App's
// one webhook already delivers every covered repository's events.
func (p *Provider) Create(ctx context.Context, req providers.CreateRequest) (sentinel.Handle, error) {
	repo, err := github.SpecRepository(req.Spec)
	if err != nil {
		return sentinel.Handle{}, err
	}
	inst, ok, err := p.covering(ctx, repo)
	if err != nil {
		return sentinel.Handle{}, err
	}
	if !ok {
		return sentinel.Handle{}, notInstalled(repo)
	}
	return handleFor(repo, inst), nil
}

// handleFor is the handle of a sentinel on repo covered by installation.
func handleFor(repo string, installation int64) sentinel.Handle {
	return sentinel.Handle{
		Provider: Slug,
		RemoteID: strconv.FormatInt(installation, 10),
		State:    map[string]any{"repo": repo, "hookKey": RouteKey, "installation": installation},
	}
}

// Attach re-checks the coverage at start-up: a repository the App no
// longer covers marks the sentinel error with the fix; a failure to ask
// keeps the handle.
func (p *Provider) Attach(ctx context.Context, h sentinel.Handle, _ providers.Delivery) (sentinel.Handle, error) {
	repo := h.StateString("repo")
	if repo == "" {
		return h, errors.New("github-app handle has no repository: re-create the sentinel")
	}
	inst, ok, err := p.covering(ctx, repo)
	switch {
	case err != nil:
		return h, nil
	case !ok:
		return h, notInstalled(repo)
	}
	return handleFor(repo, inst), nil
}

// Cancel is a no-op: the App's webhook serves other sentinels too.
func (p *Provider) Cancel(context.Context, sentinel.Handle) error { return nil }

// Status reports whether the App still covers the sentinel's repository.
func (p *Provider) Status(ctx context.Context, h sentinel.Handle) (providers.Health, error) {
	repo := h.StateString("repo")
	c, ok, err := p.loadCovered(ctx, repo)
	if err != nil {
		return providers.Health{}, err
	}
	if !ok {
		return providers.Health{OK: false, Detail: notInstalled(repo).Message}, nil
	}
	return providers.Health{OK: true, Detail: fmt.Sprintf("covered by installation %d", c.Installation),
		Extra: map[string]any{"installation": c.Installation, "route": "/inbound/sentinel-" + RouteKey}}, nil
}

// Covers implements providers.Coverer: every clause on one repository the
// App is installed on.
func (p *Provider) Covers(ctx context.Context, spec sentinel.Spec) bool {
	if !p.configured(ctx) {
		return false
	}
	repo, err := github.SpecRepository(spec)
	if err != nil {
		return false
	}
	_, ok, err := p.covering(ctx, repo)
	return err == nil && ok
}

// RouteKey implements providers.RouteOwner: the reserved key once the App
// is set up, else "" (the route answers 404 as any unknown key).
func (p *Provider) RouteKey() string {
	if !p.configured(context.Background()) {
		return ""
	}
	return RouteKey
}

// Concerns implements providers.RouteOwner: an event concerns the sentinel
// when it is on the sentinel's repository.
func (p *Provider) Concerns(h sentinel.Handle, events []sentinel.Event) bool {
	repo := strings.ToLower(h.StateString("repo"))
	if repo == "" {
		return false
	}
	for _, ev := range events {
		for _, s := range append([]string{ev.Subject}, ev.Subjects...) {
			ref, err := sentinel.ParseGitHubSubject(s)
			if err == nil && strings.EqualFold(ref.FullName(), repo) {
				return true
			}
		}
	}
	return false
}

// configured reports whether the setup fields are all stored.
func (p *Provider) configured(ctx context.Context) bool {
	s, err := p.settings(ctx)
	return err == nil && s.complete()
}
