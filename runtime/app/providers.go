package app

import (
	"errors"
	"log/slog"

	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/fake"
)

// providerDeps are what providers may be given: never the bus itself.
type providerDeps struct {
	log *slog.Logger
}

// buildProviders names every provider constructor, in catalogue order. It
// is the one place providers are listed: no init-time registration.
func buildProviders(cfg Config, deps providerDeps) ([]providers.Provider, error) {
	var out []providers.Provider
	var errs []error
	if cfg.Testing.FakeProvider {
		deps.log.Warn("the test-only fake provider is enabled")
		out = append(out, fake.New(fake.Config{FeedFile: cfg.Testing.FakeFeed}))
	}
	return out, errors.Join(errs...)
}
