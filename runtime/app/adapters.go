package app

import (
	"context"
	"errors"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus"
	"github.com/agentproto/sentinel/ingress/api"
	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/runtime/park"
	"github.com/agentproto/sentinel/runtime/sentinels"
)

// sentinelAPI adapts the runtime's sentinel service to api.Sentinels.
type sentinelAPI struct {
	svc  *sentinels.Service
	park *park.Store
}

func (a sentinelAPI) Watch(ctx context.Context, req sentinel.WatchRequest, caller string) (sentinel.View, error) {
	w, err := a.svc.Watch(ctx, req, caller)
	if err != nil {
		return sentinel.View{}, err
	}
	v := w.Sentinel.View()
	v.Existing, v.Updated = w.Existing, w.Updated
	return v, nil
}

func (a sentinelAPI) List(ctx context.Context) ([]sentinel.View, error) {
	recs, err := a.svc.List(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]sentinel.View, 0, len(recs))
	for _, r := range recs {
		out = append(out, r.View())
	}
	return out, nil
}

func (a sentinelAPI) ListPage(ctx context.Context, q api.SentinelQuery) (api.SentinelPage, error) {
	p, err := a.svc.Page(ctx, sentinels.Query(q))
	if err != nil {
		return api.SentinelPage{}, err
	}
	out := api.SentinelPage{Sentinels: make([]sentinel.View, 0, len(p.Records)), Next: p.Next}
	for _, r := range p.Records {
		out.Sentinels = append(out.Sentinels, r.View())
	}
	return out, nil
}

func (a sentinelAPI) Get(ctx context.Context, id string) (sentinel.View, error) {
	rec, err := a.svc.Get(ctx, id)
	if err != nil {
		return sentinel.View{}, err
	}
	return rec.View(), nil
}

func (a sentinelAPI) Remove(ctx context.Context, id string) error { return a.svc.Remove(ctx, id) }

func (a sentinelAPI) Status(ctx context.Context, id string) (api.SentinelStatus, error) {
	rep, err := a.svc.Status(ctx, id)
	return api.SentinelStatus(rep), err
}

func (a sentinelAPI) PollNow(ctx context.Context, id string) (*sentinel.View, error) {
	rec, err := a.svc.PollNow(ctx, id)
	if err != nil || rec == nil {
		return nil, err
	}
	v := rec.View()
	return &v, nil
}

func (a sentinelAPI) Adapters(ctx context.Context) ([]api.Adapter, error) {
	as := a.svc.Adapters(ctx)
	out := make([]api.Adapter, 0, len(as))
	for _, x := range as {
		out = append(out, api.Adapter(x))
	}
	return out, nil
}

func (a sentinelAPI) Setup(ctx context.Context, slug string, fields map[string]string) (api.SetupResult, error) {
	res, err := a.svc.Setup(ctx, slug, fields)
	return api.SetupResult(res), err
}

func (a sentinelAPI) Parked(ctx context.Context, id string, limit int) ([]sentinel.Parked, error) {
	recs, err := a.park.List(ctx, id, limit)
	if err != nil {
		return nil, err
	}
	out := make([]sentinel.Parked, 0, len(recs))
	for _, r := range recs {
		out = append(out, sentinel.Parked(r))
	}
	return out, nil
}

// inboundAPI adapts push ingress. full, when set, hears of a write
// JetStream refused for storage (the storage guard's Trip).
type inboundAPI struct {
	svc  *sentinels.Service
	full func()
}

// KnownHook reports whether a sentinel record is bound to the hook key
// (from the record cache: no bus round trip).
func (a inboundAPI) KnownHook(ctx context.Context, key string) (bool, error) {
	return a.svc.KnownHook(ctx, key)
}

func (a inboundAPI) Inbound(ctx context.Context, in providers.Inbound) (api.InboundResult, error) {
	res, err := a.svc.Inbound(ctx, in)
	if a.full != nil && bus.StorageFull(err) {
		a.full()
	}
	if errors.Is(err, sentinels.ErrPersist) {
		return api.InboundResult{}, errors.Join(api.ErrPersist, err)
	}
	return api.InboundResult(res), err
}
