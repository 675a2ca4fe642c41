package poll

import (
	"context"
	"slices"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/runtime/cluster"
)

// Kicks: a whole tick now (Kick), or the sentinels of some poll keys now
// (KickKeys, a partition taken over from a dead node), served by Run.

// Kick makes Run tick now instead of waiting out its interval.
func (l *Loop) Kick() {
	l.kickMu.Lock()
	l.full = true
	l.kickMu.Unlock()
	l.signal()
}

// KickKeys makes Run poll, at once, the owned sentinels whose poll key
// match accepts (the partition a node just took over from a dead one),
// leaving the rest to their tick.
func (l *Loop) KickKeys(match func(key string) bool) {
	l.kickMu.Lock()
	l.targets = append(l.targets, match)
	l.kickMu.Unlock()
	l.signal()
}

func (l *Loop) signal() {
	select {
	case l.kick <- struct{}{}:
	default:
	}
}

func (l *Loop) takeKicks() (full bool, targets []func(string) bool) {
	l.kickMu.Lock()
	defer l.kickMu.Unlock()
	full, targets = l.full, l.targets
	l.full, l.targets = false, nil
	return full, targets
}

// pollKeys polls the owned, pollable sentinels whose poll key any of
// targets accepts, as one tick (sharing its fetches).
func (l *Loop) pollKeys(ctx context.Context, targets []func(string) bool) {
	l.tick.Lock()
	defer l.tick.Unlock()
	own := l.ownership
	if own.Writable() != nil {
		return
	}
	recs, err := l.owned(ctx, own, func(key string) bool {
		return slices.ContainsFunc(targets, func(m func(string) bool) bool { return m(key) })
	})
	if err != nil {
		l.log.Warn("poll: list sentinels failed", "err", err)
		return
	}
	ctx = providers.WithTick(ctx)
	for _, r := range recs {
		if ctx.Err() != nil {
			return
		}
		l.pollOne(ctx, r)
	}
}

// owned returns the records this node polls now whose poll key also
// accepts, in id order (ids are ULIDs: creation order), copying only
// those from the mirror (a partition taken over is a small part of it).
func (l *Loop) owned(ctx context.Context, own cluster.Ownership, also func(key string) bool) ([]*sentinel.Sentinel, error) {
	ids, err := l.store.Select(ctx, func(r *sentinel.Sentinel) bool {
		if !r.Status.Pollable() {
			return false
		}
		key := pollKey(r)
		return own.OwnsPoll(key) && also(key)
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(ids)
	out := make([]*sentinel.Sentinel, 0, len(ids))
	for _, id := range ids {
		rec, _, err := l.store.Peek(ctx, id)
		if err != nil {
			continue // removed since the scan
		}
		out = append(out, rec)
	}
	return out, nil
}
