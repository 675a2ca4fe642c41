package sentinels

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
)

// ErrPersist is returned (wrapped) when verified events could not be stored:
// the only case push ingress answers 500.
var ErrPersist = errors.New("could not persist events")

// InboundResult is the outcome of one push delivery.
type InboundResult struct {
	// Ignored: verified, but nothing to deliver (ping, unsupported type).
	Ignored   bool
	Events    int
	Sentinels int
	// Delivered counts events newly stored for a sentinel (duplicates of an
	// earlier delivery are not counted).
	Delivered int
}

// Inbound handles one push request for a hook key: it finds the sentinels
// bound to the key, has their provider verify and parse the request (the
// signature over the raw body is checked before anything is parsed), and
// stores the events for every bound sentinel, answering once each is
// persisted. Errors: providers.ErrUnknownHook (404), *providers.InboundError
// (401/400), ErrPersist (500).
func (s *Service) Inbound(ctx context.Context, in providers.Inbound) (InboundResult, error) {
	if in.HookKey == "" {
		return InboundResult{}, providers.ErrUnknownHook
	}
	recs, err := s.bound(ctx, in.HookKey, true)
	if err != nil {
		return InboundResult{}, fmt.Errorf("%w: %w", ErrPersist, err)
	}
	byProvider := map[string][]*sentinel.Sentinel{}
	var order []string
	for _, r := range recs {
		if _, seen := byProvider[r.Provider]; !seen {
			order = append(order, r.Provider)
		}
		byProvider[r.Provider] = append(byProvider[r.Provider], r)
	}
	if len(order) == 0 {
		return InboundResult{}, providers.ErrUnknownHook
	}
	res := InboundResult{}
	parsedAny := false
	for _, slug := range order {
		prov, ok := s.Registry.Get(slug)
		if !ok {
			continue
		}
		parser, ok := prov.(providers.InboundParser)
		if !ok {
			continue
		}
		bound := byProvider[slug]
		events, err := parser.ParseInbound(ctx, in, bound[0].Handle)
		if err != nil {
			return InboundResult{}, err
		}
		parsedAny = true
		res.Sentinels += len(bound)
		if len(events) > res.Events {
			res.Events = len(events)
		}
		if len(events) == 0 {
			continue
		}
		now := s.Now().UnixMilli()
		for _, rec := range bound {
			if !rec.Status.Pollable() {
				continue
			}
			if rec.ExpiredAt(now) {
				if err := s.Expirer.Expire(ctx, rec.ID, "until.at passed"); err != nil {
					s.Log.Warn("expiry at ingress failed", "sentinel", rec.ID, "err", err)
				}
				continue
			}
			n, err := s.Publisher.Publish(ctx, rec.ID, events, "push")
			if err != nil {
				return InboundResult{}, fmt.Errorf("%w: %w", ErrPersist, err)
			}
			res.Delivered += n
		}
	}
	if !parsedAny {
		return InboundResult{}, providers.ErrUnknownHook
	}
	res.Ignored = res.Events == 0
	return res, nil
}

// bound lists the records bound to a hook key, oldest first. In a
// cluster the mirror first catches up with the bucket (catchUp), so a
// sentinel another node created a moment ago gets its events too; a
// mirror that cannot catch up in 2 s is bypassed for the bucket itself.
func (s *Service) bound(ctx context.Context, key string, catchUp bool) ([]*sentinel.Sentinel, error) {
	if catchUp && s.Store.LeaderGet != nil {
		sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		err := s.Store.SyncMirror(sctx)
		cancel()
		if err != nil {
			recs, err := s.Store.ListFresh(ctx)
			if err != nil {
				return nil, err
			}
			return withHook(recs, key), nil
		}
	}
	return s.Store.WithHook(ctx, key)
}

func withHook(recs []*sentinel.Sentinel, key string) []*sentinel.Sentinel {
	var out []*sentinel.Sentinel
	for _, r := range recs {
		if providers.HookKeyOf(r.Handle) == key {
			out = append(out, r)
		}
	}
	return out
}

// KnownHook reports whether a record is bound to the hook key. A key the
// mirror knows is answered from it; one it does not know is looked up
// again once the mirror caught up (in a cluster), so a sentinel another
// node created a moment ago is known. A push request then pays a single
// catch-up, in Inbound, which reads the records it delivers to after it
// (a key removed meanwhile answers ErrUnknownHook there).
func (s *Service) KnownHook(ctx context.Context, key string) (bool, error) {
	recs, err := s.bound(ctx, key, false)
	if err != nil {
		return false, err
	}
	if len(recs) > 0 || s.Store.LeaderGet == nil {
		return len(recs) > 0, nil
	}
	recs, err = s.bound(ctx, key, true)
	if err != nil {
		return false, err
	}
	return len(recs) > 0, nil
}

// DeliverPushed publishes events for one sentinel into the events stream
// (the entry point push providers use). It is safe under concurrent calls
// for one sentinel: the stream drops duplicates and delivery is serialized
// per partition. An unknown or non-pollable sentinel stores nothing.
func (s *Service) DeliverPushed(ctx context.Context, sentinelID string, events []sentinel.Event) (int, error) {
	rec, _, err := s.Store.Get(ctx, sentinelID)
	if errors.Is(err, ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if !rec.Status.Pollable() {
		return 0, nil
	}
	if rec.ExpiredAt(s.Now().UnixMilli()) {
		return 0, s.Expirer.Expire(ctx, sentinelID, "until.at passed")
	}
	return s.Publisher.Publish(ctx, sentinelID, events, "push")
}
