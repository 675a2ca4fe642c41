package sentinels

import (
	"context"
	"fmt"
	"time"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
)

// Provider selection: the explicit provider of a spec, or the first of the
// selection order that is ready for its subject, with the fallback when
// none is.

// DefaultSelectionOrder is the auto-selection order: agentpush when ready,
// github-app when it is installed on the subject's repository, webhook
// when a stable public URL exists and it is ready, else local-gh.
var DefaultSelectionOrder = []string{"agentpush", "github-app", "webhook", "local-gh"}

// fallback is the provider auto-selection settles on when none is ready:
// the last of the order that supports the scheme and needs no public URL.
func (s *Service) fallback(ctx context.Context, spec sentinel.Spec) providers.Provider {
	scheme := sentinel.SchemeOf(spec.Match[0].Subject)
	order := s.selectionOrder
	if len(order) == 0 {
		order = DefaultSelectionOrder
	}
	for i := len(order) - 1; i >= 0; i-- {
		if p, ok := s.registry.Get(order[i]); ok && supportsScheme(p, scheme) && !p.Capabilities().NeedsPublicURL && !s.endpointUnconfirmed(ctx, order[i]) {
			return p
		}
	}
	return nil
}

// resolveProvider returns the explicit provider (unknown_provider when it
// is not registered; its own setup error when it is not ready) or the
// auto-selected one.
func (s *Service) resolveProvider(ctx context.Context, spec *sentinel.Spec) (providers.Provider, error) {
	p, _, err := s.resolveProviderReady(ctx, spec)
	return p, err
}

// resolveProviderReady is resolveProvider with the chosen provider's
// readiness (an auto-selected one may not be ready).
func (s *Service) resolveProviderReady(ctx context.Context, spec *sentinel.Spec) (providers.Provider, providers.Readiness, error) {
	if spec.Provider != "" {
		p, ok := s.registry.Get(spec.Provider)
		if !ok {
			return nil, providers.Readiness{}, sentinel.Errorf(sentinel.CodeUnknownProvider, "unknown provider %q (known: %v)", spec.Provider, s.registry.Slugs())
		}
		r := readiness(ctx, p)
		if !r.Ready {
			return nil, r, sentinel.Errorf(sentinel.CodeProviderCreateFail, "%s is not ready: %s", spec.Provider, r.Reason)
		}
		return p, r, nil
	}
	return s.selectReady(ctx, spec)
}

// Select picks a provider for a spec without an explicit one: the first
// provider in the selection order that supports the subjects' scheme, has
// a stable public URL when it needs one, and is ready; else the last
// provider in the order that supports the scheme (local-gh for github
// subjects), ready or not; else any registered provider that supports it.
// A provider whose endpoint the last setup changed (and no setup
// confirmed since) is never auto-selected: a watch names it explicitly,
// so the subjects of a watch never go by themselves to a URL that was
// just set.
func (s *Service) Select(ctx context.Context, spec *sentinel.Spec) (providers.Provider, error) {
	p, _, err := s.selectReady(ctx, spec)
	return p, err
}

// selectReady is Select with the chosen provider's readiness.
func (s *Service) selectReady(ctx context.Context, spec *sentinel.Spec) (providers.Provider, providers.Readiness, error) {
	probed := map[string]providers.Readiness{}
	ready := func(p providers.Provider) providers.Readiness {
		slug := p.Info().Slug
		if r, ok := probed[slug]; ok {
			return r
		}
		r := readiness(ctx, p)
		probed[slug] = r
		return r
	}
	scheme := sentinel.SchemeOf(spec.Match[0].Subject)
	order := s.selectionOrder
	if len(order) == 0 {
		order = DefaultSelectionOrder
	}
	pub := s.publicURL()
	for _, slug := range order {
		p, ok := s.registry.Get(slug)
		if !ok || !supportsScheme(p, scheme) || s.endpointUnconfirmed(ctx, slug) {
			continue
		}
		if p.Capabilities().NeedsPublicURL && (pub.URL == "" || !pub.Stable) {
			continue
		}
		if r := ready(p); r.Ready && covers(ctx, p, spec) {
			return p, r, nil
		}
	}
	for i := len(order) - 1; i >= 0; i-- {
		if p, ok := s.registry.Get(order[i]); ok && supportsScheme(p, scheme) && !p.Capabilities().NeedsPublicURL && !s.endpointUnconfirmed(ctx, order[i]) {
			return p, ready(p), nil
		}
	}
	for _, p := range s.registry.All() {
		if supportsScheme(p, scheme) && !s.endpointUnconfirmed(ctx, p.Info().Slug) {
			return p, ready(p), nil
		}
	}
	return nil, providers.Readiness{}, sentinel.Errorf(sentinel.CodeUnknownProvider, "no provider supports %q subjects", scheme)
}

// unconfirmedReason says why a provider is not auto-selected.
const unconfirmedReason = "its endpoint changed in the last setup: name it as the watch's provider, or confirm the endpoint by restating it in a setup"

// endpointUnconfirmed reports whether auto-selection must pass the
// provider by (its endpoint changed in the last setup); a store it cannot
// read counts as unconfirmed.
func (s *Service) endpointUnconfirmed(ctx context.Context, slug string) bool {
	if s.creds == nil {
		return false
	}
	u, err := s.creds.EndpointUnconfirmed(ctx, slug)
	if err != nil {
		s.log.Warn("reading a provider's setup failed; not auto-selecting it", "provider", slug, "err", err)
		return true
	}
	return u
}

func supportsScheme(p providers.Provider, scheme string) bool {
	for _, s := range p.Capabilities().Subjects {
		if s == "*" || s == scheme {
			return true
		}
	}
	return false
}

// readiness probes a provider that declares readiness; a panic counts as
// not ready. Providers without a probe are ready.
func readiness(ctx context.Context, p providers.Provider) (r providers.Readiness) {
	rc, ok := p.(providers.ReadinessChecker)
	if !ok {
		return providers.Readiness{Ready: true}
	}
	defer func() {
		if v := recover(); v != nil {
			r = providers.Readiness{Ready: false, Reason: fmt.Sprintf("readiness probe failed: %v", v)}
		}
	}()
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return rc.Readiness(cctx)
}
