package app

import (
	"context"
	"os"
	"sync"
	"time"

	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/adapter"
)

// adapterStopGrace is how long an adapter has to exit after its stdin
// closes at shutdown before it is killed.
const adapterStopGrace = 2 * time.Second

// discoverAdapters returns a provider for every adapter executable in
// <home>/adapters, adapters.paths and PATH (first of a slug wins; the
// built-in slugs cannot be shadowed). Nothing is started: each adapter
// starts on its first use. Candidates passed over are logged with the
// reason.
func discoverAdapters(cfg Config, deps providerDeps) []providers.Provider {
	found, skipped := discover(cfg)
	for _, s := range skipped {
		deps.log.Warn("adapter skipped", "path", s.Path, "reason", s.Reason)
	}
	out := make([]providers.Provider, 0, len(found))
	for _, f := range found {
		deps.log.Info("adapter discovered", "provider", f.Slug, "path", f.Path)
		out = append(out, adapter.New(f, cfg.Adapters, adapter.Deps{Log: deps.log, Creds: deps.creds, PublicURL: deps.publicURL, Now: deps.now}))
	}
	return out
}

// discover runs adapter discovery as the node's config says.
func discover(cfg Config) ([]adapter.Found, []adapter.Skipped) {
	return adapter.Discover(adapter.Where{
		Dirs:     adapter.SearchDirs(cfg.Home, cfg.Adapters.Paths, os.Getenv("PATH"), cfg.Adapters.NoPath),
		Builtins: builtinSlugs,
	})
}

// adapterProviders returns the registry's adapters.
func (a *App) adapterProviders() []*adapter.Provider {
	var out []*adapter.Provider
	if a.Registry == nil {
		return nil
	}
	for _, p := range a.Registry.All() {
		if ap, ok := p.(*adapter.Provider); ok {
			out = append(out, ap)
		}
	}
	return out
}

// stopAdapters stops every adapter process at once (each gets
// adapterStopGrace after its stdin closes).
func (a *App) stopAdapters(ctx context.Context) error {
	var wg sync.WaitGroup
	for _, ap := range a.adapterProviders() {
		wg.Add(1)
		go func() { defer wg.Done(); ap.Process().Stop(ctx, adapterStopGrace) }()
	}
	wg.Wait()
	return nil
}
