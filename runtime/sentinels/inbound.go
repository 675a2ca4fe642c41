package sentinels

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus"
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
// persisted. In a cluster the record mirror catches up with the bucket
// beside the first publishes (the sentinels the mirror already binds to
// the key are stored at once); a sentinel the catch-up adds (another node
// created it a moment ago) is stored before the answer. Errors:
// providers.ErrUnknownHook (404), *providers.InboundError (401/400),
// ErrPersist (500).
func (s *Service) Inbound(ctx context.Context, in providers.Inbound) (InboundResult, error) {
	if in.HookKey == "" {
		return InboundResult{}, providers.ErrUnknownHook
	}
	if prov, ro, ok := s.reservedRoute(in.HookKey); ok {
		return s.inboundReserved(ctx, in, prov, ro)
	}
	var caughtUp chan boundRecords
	if s.store.leaderReads() {
		caughtUp = make(chan boundRecords, 1)
		go func() {
			recs, err := s.bound(ctx, in.HookKey, true)
			caughtUp <- boundRecords{recs, err}
		}()
	}
	recs, err := s.store.WithHook(ctx, in.HookKey)
	if err != nil {
		if caughtUp != nil {
			<-caughtUp
		}
		return InboundResult{}, fmt.Errorf("%w: %w", ErrPersist, bus.Retryable(err))
	}
	st := &inboundState{parsed: map[string][]sentinel.Event{}, stored: map[string]bool{}}
	err = s.storeInbound(ctx, in, recs, st)
	if caughtUp != nil {
		fresh := <-caughtUp
		if err != nil {
			return InboundResult{}, err
		}
		if fresh.err != nil {
			return InboundResult{}, fmt.Errorf("%w: %w", ErrPersist, bus.Retryable(fresh.err))
		}
		err = s.storeInbound(ctx, in, fresh.recs, st)
	}
	if err != nil {
		return InboundResult{}, err
	}
	if !st.parsedAny {
		return InboundResult{}, providers.ErrUnknownHook
	}
	st.res.Ignored = st.res.Events == 0
	return st.res, nil
}

// boundRecords is what the mirror's catch-up found bound to a key.
type boundRecords struct {
	recs []*sentinel.Sentinel
	err  error
}

// inboundState is one push request's progress over the records it was
// bound to: each provider's parse of the request (verified once), the
// sentinels whose events are stored, and the result so far.
type inboundState struct {
	parsed    map[string][]sentinel.Event
	stored    map[string]bool
	parsedAny bool
	res       InboundResult
}

// store parses the request for the providers of recs not parsed yet and
// stores its events for every record of recs not stored yet.
func (s *Service) storeInbound(ctx context.Context, in providers.Inbound, recs []*sentinel.Sentinel, st *inboundState) error {
	now := s.now().UnixMilli()
	for _, rec := range recs {
		if st.stored[rec.ID] {
			continue
		}
		events, ok, err := s.parse(ctx, in, rec, st)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		st.stored[rec.ID] = true
		st.res.Sentinels++
		if len(events) == 0 || !rec.Status.Pollable() {
			continue
		}
		if rec.ExpiredAt(now) {
			if err := s.expirer.Expire(ctx, rec.ID, "until.at passed"); err != nil {
				s.log.Warn("expiry at ingress failed", "sentinel", rec.ID, "err", err)
			}
			continue
		}
		n, err := s.publisher.Publish(ctx, rec.ID, events, "push")
		if err != nil {
			return fmt.Errorf("%w: %w", ErrPersist, bus.Retryable(err))
		}
		st.res.Delivered += n
	}
	return nil
}

// parse returns the request's events as rec's provider reads them,
// verifying and parsing once per provider (with the handle of the first
// record of that provider); ok is false for a provider that is unknown or
// takes no pushes.
func (s *Service) parse(ctx context.Context, in providers.Inbound, rec *sentinel.Sentinel, st *inboundState) ([]sentinel.Event, bool, error) {
	if events, done := st.parsed[rec.Provider]; done {
		return events, true, nil
	}
	prov, ok := s.registry.Get(rec.Provider)
	if !ok {
		return nil, false, nil
	}
	parser, ok := prov.(providers.InboundParser)
	if !ok {
		return nil, false, nil
	}
	events, err := parser.ParseInbound(ctx, in, rec.Handle)
	if err != nil {
		return nil, false, err
	}
	st.parsed[rec.Provider] = events
	st.parsedAny = true
	st.res.Events = max(st.res.Events, len(events))
	return events, true, nil
}

// bound lists the records bound to a hook key, oldest first. In a
// cluster the mirror first catches up with the bucket (catchUp), so a
// sentinel another node created a moment ago gets its events too; a
// mirror that cannot catch up in 2 s is bypassed for the bucket itself.
func (s *Service) bound(ctx context.Context, key string, catchUp bool) ([]*sentinel.Sentinel, error) {
	if catchUp && s.store.leaderReads() {
		sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		err := s.store.SyncMirror(sctx)
		cancel()
		if err != nil {
			recs, err := s.store.ListFresh(ctx)
			if err != nil {
				return nil, err
			}
			return withHook(recs, key), nil
		}
	}
	return s.store.WithHook(ctx, key)
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
// (a key removed meanwhile answers ErrUnknownHook there). An unknown key
// is cheap (hookMisses): remembered for a moment after its catch-up, and
// catch-ups of concurrent misses shared; past the bound of waiting misses
// the answer is unavailable.
func (s *Service) KnownHook(ctx context.Context, key string) (bool, error) {
	if _, _, ok := s.reservedRoute(key); ok {
		return true, nil
	}
	recs, err := s.bound(ctx, key, false)
	if err != nil {
		return false, err
	}
	if len(recs) > 0 || !s.store.leaderReads() {
		return len(recs) > 0, nil
	}
	if s.misses.remembered(key, s.now()) {
		return false, nil
	}
	recs, err = s.misses.gate.Do(ctx, func(ctx context.Context) ([]*sentinel.Sentinel, error) {
		if err := s.store.SyncMirror(ctx); err != nil {
			return s.store.ListFresh(ctx)
		}
		return nil, nil
	})
	if err != nil {
		return false, err
	}
	if recs != nil {
		recs = withHook(recs, key)
	} else if recs, err = s.store.WithHook(ctx, key); err != nil {
		return false, err
	}
	if len(recs) == 0 {
		s.misses.remember(key, s.now())
	}
	return len(recs) > 0, nil
}

// DeliverPushed publishes events for one sentinel into the events stream
// (the entry point push providers use). It is safe under concurrent calls
// for one sentinel: the stream drops duplicates and delivery is serialized
// per partition. An unknown or non-pollable sentinel stores nothing.
func (s *Service) DeliverPushed(ctx context.Context, sentinelID string, events []sentinel.Event) (int, error) {
	rec, err := s.fresh(ctx, sentinelID)
	if errors.Is(err, ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if !rec.Status.Pollable() {
		return 0, nil
	}
	if rec.ExpiredAt(s.now().UnixMilli()) {
		return 0, s.expirer.Expire(ctx, sentinelID, "until.at passed")
	}
	return s.publisher.Publish(ctx, sentinelID, events, "push")
}
