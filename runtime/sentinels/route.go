package sentinels

import (
	"context"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
)

// reservedRoute returns the provider owning key as its reserved route
// (providers.RouteOwner: the GitHub App's one webhook), if any.
func (s *Service) reservedRoute(key string) (providers.Provider, providers.RouteOwner, bool) {
	if s.registry == nil || key == "" {
		return nil, nil, false
	}
	for _, p := range s.registry.All() {
		if ro, ok := p.(providers.RouteOwner); ok && ro.RouteKey() == key {
			return p, ro, true
		}
	}
	return nil, nil, false
}

// inboundReserved handles a push to a reserved route: the owner verifies
// and parses the request once, whether or not a sentinel is bound to the
// key (an installation change concerns none), and the events are stored
// for the bound sentinels the owner says they concern, not for every
// sentinel of the route.
func (s *Service) inboundReserved(ctx context.Context, in providers.Inbound, prov providers.Provider, ro providers.RouteOwner) (InboundResult, error) {
	parser, ok := prov.(providers.InboundParser)
	if !ok {
		return InboundResult{}, providers.ErrUnknownHook
	}
	slug := prov.Info().Slug
	events, err := parser.ParseInbound(ctx, in, sentinel.Handle{Provider: slug, State: map[string]any{"hookKey": in.HookKey}})
	if err != nil {
		return InboundResult{}, err
	}
	if len(events) == 0 {
		return InboundResult{Ignored: true}, nil
	}
	recs, err := s.bound(ctx, in.HookKey, s.store.leaderReads())
	if err != nil {
		return InboundResult{}, err
	}
	var concerned []*sentinel.Sentinel
	for _, r := range recs {
		if r.Provider == slug && ro.Concerns(r.Handle, events) {
			concerned = append(concerned, r)
		}
	}
	st := &inboundState{parsed: map[string][]sentinel.Event{slug: events}, stored: map[string]bool{}, parsedAny: true}
	st.res.Events = len(events)
	if err := s.storeInbound(ctx, in, concerned, st); err != nil {
		return InboundResult{}, err
	}
	return st.res, nil
}

// covers reports whether auto-selection may pick p for spec: a provider
// that serves only some subjects (providers.Coverer) must cover them.
func covers(ctx context.Context, p providers.Provider, spec *sentinel.Spec) bool {
	c, ok := p.(providers.Coverer)
	return !ok || c.Covers(ctx, *spec)
}
