package sentinels

import (
	"context"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
)

// Plan does everything Create does before it calls the provider: it
// validates and expands the request, checks the target session and
// resolves the provider (explicit, or auto-selected), with the same error
// codes. Nothing is stored and no provider is asked to create anything:
// it backs dry runs.
func (s *Service) Plan(ctx context.Context, req sentinel.WatchRequest, caller string) (sentinel.Spec, providers.Provider, error) {
	spec, err := req.Expand(caller)
	if err != nil {
		return sentinel.Spec{}, nil, err
	}
	if s.sessions != nil {
		if err := s.sessions.CheckTarget(ctx, spec.Target.SessionID); err != nil {
			return sentinel.Spec{}, nil, err
		}
	}
	prov, err := s.resolveProvider(ctx, &spec)
	if err != nil {
		return sentinel.Spec{}, nil, err
	}
	return spec, prov, nil
}
