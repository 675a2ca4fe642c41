package githubapp

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/github"
)

// Slug is the provider's slug and its credential-store key.
const Slug = "github-app"

// RouteKey is the App's reserved hook key: GitHub posts every delivery of
// the App to /inbound/sentinel-github-app (the App's webhook URL).
const RouteKey = "github-app"

// Source is the CloudEvents source of the events this provider emits.
const Source = "//agentproto.local/sentinel/github-app"

// Provider is the github-app provider. It is safe for concurrent use;
// several instances (one per node) share one Store.
type Provider struct {
	cfg Config

	mu sync.Mutex
	// auth is the App authenticator of the settings authFor names; a new
	// setup (other App, key or URL) replaces it. mu guards both.
	auth    *github.AppAuth
	authFor settings
	// clients are the in-process clients per installation (their calls
	// spend that installation's quota), for authFor's App.
	clients map[int64]*github.Client
	// repoCache remembers InstallationOf's answers (mu guards it).
	repoCache map[string]cachedRepo
	// lookup answers what the App's payloads do not say (the PR of a
	// fork's CI by its head commit, a review's inline comments), asking
	// with the installation covering the repository.
	lookup *github.HeadLookup
}

// New returns the provider, or an error naming the missing dependencies.
func New(cfg Config) (*Provider, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.setDefaults()
	p := &Provider{cfg: cfg, clients: map[int64]*github.Client{}, repoCache: map[string]cachedRepo{}}
	p.lookup = github.NewHeadLookupFor(p.lookupCaller, cfg.Now)
	return p, nil
}

// Info returns the provider's metadata.
func (p *Provider) Info() providers.Info {
	return providers.Info{
		Slug:          Slug,
		Name:          "GitHub App",
		Version:       "1.0.0",
		Description:   "a GitHub App installed on an organization: one webhook for every installed repository, installation tokens with their own quota",
		RequiresSetup: true,
	}
}

// Capabilities returns the declared capabilities. The App's webhook URL is
// set on the App itself (its settings page), so a watch needs no public
// URL of its own.
func (p *Provider) Capabilities() providers.Capabilities {
	return providers.Capabilities{
		Subjects:         []string{"github"},
		Push:             true,
		RequiresAuth:     true,
		TypicalLatencyMs: 2000,
	}
}

// DefaultTypes returns the GitHub PR default set for the subjects the
// provider accepts, else none.
func (p *Provider) DefaultTypes(subject string) []string {
	if _, err := github.ClauseRepository(subject); err != nil {
		return []string{}
	}
	return sentinel.DefaultPRTypes()
}

// PreferredDelivery implements providers.DeliveryPreferrer: the App
// pushes.
func (p *Provider) PreferredDelivery(context.Context, int) providers.Delivery {
	return providers.Delivery{Mode: providers.ModePush}
}

// appAuth returns the authenticator of the current settings, building it
// (reading the key file) when the settings changed.
func (p *Provider) appAuth(ctx context.Context) (*github.AppAuth, settings, error) {
	s, err := p.settings(ctx)
	if err != nil {
		return nil, s, err
	}
	if !s.complete() {
		return nil, s, providers.SetupError("github-app is not set up: %s", setupFix)
	}
	if err := providers.CheckSecureURL(s.baseURL); err != nil {
		return nil, s, providers.SetupError("github-app base URL refused, no JWT is sent to it: %v: %s", err, setupFix)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.auth != nil && p.authFor == s {
		return p.auth, s, nil
	}
	raw, err := readKey(s.keyFile)
	if err != nil {
		return nil, s, err
	}
	key, err := github.ParseAppKey(raw)
	if err != nil {
		return nil, s, providers.SetupError("github-app private key file %s: %v: give the PEM GitHub generated for the App", s.keyFile, err)
	}
	appID := s.appID
	a, err := github.NewAppAuth(github.AppAuthConfig{
		Sign: func(_ context.Context, now time.Time) (string, time.Time, error) {
			return github.SignAppJWT(key, appID, now)
		},
		BaseURL: s.baseURL, HTTP: p.cfg.HTTP, Now: p.cfg.Now, Observe: p.cfg.Observe, Hold: p.cfg.Hold,
	})
	if err != nil {
		return nil, s, err
	}
	p.auth, p.authFor, p.clients = a, s, map[int64]*github.Client{}
	return a, s, nil
}

// InstallationClient returns the in-process client of an installation:
// its calls carry the installation's token and spend its quota.
func (p *Provider) InstallationClient(ctx context.Context, installation int64) (*github.Client, error) {
	a, s, err := p.appAuth(ctx)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if c := p.clients[installation]; c != nil && p.auth == a {
		return c, nil
	}
	c, err := github.NewClient(github.ClientConfig{BaseURL: s.baseURL, HTTP: p.cfg.HTTP, Token: a.Installation(installation),
		Now: p.cfg.Now, Credential: "installation:" + strconv.FormatInt(installation, 10), Observe: p.cfg.Observe, Hold: p.cfg.Hold})
	if err != nil {
		return nil, err
	}
	if p.auth == a {
		p.clients[installation] = c
	}
	return c, nil
}

// RepoClient returns the client of the installation covering repo
// (owner/repo), or ok false when the App is not set up or does not cover
// it: polls of a covered repository spend the installation's quota.
func (p *Provider) RepoClient(ctx context.Context, repo string) (*github.Client, bool) {
	inst, ok := p.InstallationOf(ctx, repo)
	if !ok {
		return nil, false
	}
	c, err := p.InstallationClient(ctx, inst)
	if err != nil {
		return nil, false
	}
	return c, true
}

// lookupCaller is the head lookup's github.CallerFor: the client of the
// installation covering repo. A repository the App does not cover is a
// non-retryable not_found (the event stays at the repository); a
// coverage the store or GitHub cannot tell just now is retryable, so the
// delivery fails and reconciliation brings it again.
func (p *Provider) lookupCaller(ctx context.Context, repo sentinel.GitHubRef) (github.APICaller, error) {
	inst, ok, err := p.covering(ctx, repo.FullName())
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, &providers.Error{Reason: providers.ReasonNotFound, Message: "github-app is not installed on " + repo.FullName()}
	}
	return p.InstallationClient(ctx, inst)
}

// repoCacheFor is how long InstallationOf trusts an answer in memory.
const repoCacheFor = time.Minute

// cachedRepo is one remembered answer of InstallationOf.
type cachedRepo struct {
	installation int64
	at           time.Time
}

// InstallationOf returns the installation covering repo, answered from
// memory for a minute (it is asked for every poll), else from the store
// (listing GitHub when the listing is stale); ok false when the App is
// not set up or does not cover repo.
func (p *Provider) InstallationOf(ctx context.Context, repo string) (int64, bool) {
	k := strings.ToLower(repo)
	now := p.cfg.Now()
	p.mu.Lock()
	c, hit := p.repoCache[k]
	p.mu.Unlock()
	if hit && now.Sub(c.at) < repoCacheFor && now.Sub(c.at) >= 0 {
		return c.installation, c.installation > 0
	}
	var inst int64
	if p.configured(ctx) {
		if i, ok, err := p.covering(ctx, repo); err == nil && ok {
			inst = i
		}
	}
	p.mu.Lock()
	if len(p.repoCache) >= maxRepoCache {
		clear(p.repoCache)
	}
	p.repoCache[k] = cachedRepo{installation: inst, at: now}
	p.mu.Unlock()
	return inst, inst > 0
}

// maxRepoCache bounds InstallationOf's memory.
const maxRepoCache = 10000

// Interface guards.
var (
	_ providers.Provider          = (*Provider)(nil)
	_ providers.InboundParser     = (*Provider)(nil)
	_ providers.ReadinessChecker  = (*Provider)(nil)
	_ providers.Reconciler        = (*Provider)(nil)
	_ providers.SetupFielder      = (*Provider)(nil)
	_ providers.RouteOwner        = (*Provider)(nil)
	_ providers.Coverer           = (*Provider)(nil)
	_ providers.DeliveryPreferrer = (*Provider)(nil)
)
