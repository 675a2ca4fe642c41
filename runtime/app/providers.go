package app

import (
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/agentpush"
	"github.com/agentproto/sentinel/providers/fake"
	"github.com/agentproto/sentinel/providers/github"
	"github.com/agentproto/sentinel/providers/githubapp"
	"github.com/agentproto/sentinel/providers/localgh"
	"github.com/agentproto/sentinel/providers/webhook"
)

// providerDeps are what providers may be given: narrow stores and
// functions, never the bus itself.
type providerDeps struct {
	log       *slog.Logger
	now       func() time.Time
	hooks     providers.KV
	locker    providers.Locker
	creds     providers.CredentialSource
	publicURL providers.PublicURLFunc
	// githubHTTP is the client of in-process GitHub calls (nil: the
	// default, which honours HTTPS_PROXY and SSL_CERT_FILE as gh does).
	githubHTTP *http.Client
	// observe receives the rate-limit headers of GitHub answers (the
	// quota governor); nil drops them.
	observe github.RateObserver
	// hold is the quota governor's cluster-wide pause of a credential
	// (secondary limits); nil pauses nothing.
	hold github.HoldFunc
}

// builtinSlugs are the slugs no discovered adapter may take (the test-only
// fake's included, enabled or not).
var builtinSlugs = []string{localgh.Slug, webhook.Slug, githubapp.Slug, agentpush.Slug, fake.Slug}

// buildProviders names every provider constructor, in catalogue order
// (local-gh, webhook, github-app, agentpush; the test-only fake; then the adapters
// discovery finds, see adapters_discover.go). It is the one place providers
// are listed: no init-time registration.
func buildProviders(cfg Config, deps providerDeps) ([]providers.Provider, error) {
	var out []providers.Provider
	var errs []error
	runner := github.NewRunner(github.Config{})
	creds, err := github.ResolveCredentials(runner, cfg.GitHub.APIURL)
	if err != nil {
		return nil, err
	}
	client, err := github.NewClient(github.ClientConfig{BaseURL: creds.APIBase, Token: creds.Token, Now: deps.now, Credential: "token", Observe: deps.observe, Hold: deps.hold, HTTP: deps.githubHTTP})
	if err != nil {
		return nil, err
	}
	// With a token from the environment every GitHub call is in-process,
	// hook management included: gh is never run.
	var hookAPI webhook.Runner = heldRunner{Runner: runner, hold: deps.hold, now: deps.now}
	if creds.InProcess() {
		hookAPI = client
	}
	deps.log.Info("GitHub credentials", "source", creds.Source, "api", creds.APIBase)

	// The App is built first: local-gh polls a repository it covers with
	// its installation's token.
	ga, gaErr := githubapp.New(githubapp.Config{Creds: deps.creds, Store: deps.hooks, HTTP: deps.githubHTTP, Now: deps.now,
		Log: deps.log.With("provider", githubapp.Slug), Observe: deps.observe, Hold: deps.hold,
		Preset: githubapp.Preset{AppID: cfg.GitHub.App.AppID, PrivateKeyFile: cfg.GitHub.App.PrivateKeyFile, WebhookSecret: cfg.GitHub.App.WebhookSecret, BaseURL: creds.APIBase}})
	var repoClient localgh.RepoClientFunc
	if gaErr == nil {
		repoClient = ga.RepoClient
	}
	lg, err := localgh.New(localgh.Config{Runner: runner, Credentials: creds, Client: client, RepoClient: repoClient, Now: deps.now, Logger: deps.log.With("provider", localgh.Slug), SelfLogin: cfg.GitHub.SelfLogin})
	if err != nil {
		errs = append(errs, err)
	} else {
		out = append(out, lg)
	}

	wh, err := webhook.New(webhook.Config{Runner: hookAPI, Credentials: creds, Store: deps.hooks, Locker: deps.locker, PublicURL: deps.publicURL,
		AllowHTTP: cfg.PublicURLAllowHTTP, Now: deps.now, Log: deps.log.With("provider", "webhook"), SelfLogin: cfg.GitHub.SelfLogin})
	if err != nil {
		errs = append(errs, err)
	} else {
		out = append(out, wh)
	}

	if gaErr != nil {
		errs = append(errs, gaErr)
	} else {
		out = append(out, ga)
	}

	out = append(out, agentpush.New(agentpush.Config{Creds: deps.creds, PublicURL: deps.publicURL, Now: deps.now,
		Log: deps.log.With("provider", agentpush.Slug)}))

	if cfg.Testing.FakeProvider {
		deps.log.Warn("the test-only fake provider is enabled")
		out = append(out, fake.New(fake.Config{FeedFile: cfg.Testing.FakeFeed}))
	}
	out = append(out, discoverAdapters(cfg, deps)...)
	return out, errors.Join(errs...)
}
