package subscriptions

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentproto/sentinel"
)

// Sweep removes every subscription whose client stopped: a poll
// subscription nobody polled for PollIdleExpiry, a push subscription
// without a live stream for PushLinger, a webhook subscription past its
// TTL. Every node may run it: a removal is a compare-and-set delete of the
// record as read, so a subscription touched meanwhile stays.
func (s *Service) Sweep(ctx context.Context) {
	recs, err := s.Store.List(ctx)
	if err != nil {
		s.Log.Warn("listing mcp events subscriptions failed", "err", err)
		return
	}
	for _, rec := range recs {
		if why := s.lapsed(rec, s.Now().UnixMilli()); why != "" {
			s.endIfUnchanged(ctx, rec.ID, func(r *Record) bool { return s.lapsed(r, s.Now().UnixMilli()) != "" }, why)
		}
	}
}

// lapsed names why a subscription ended, or "".
func (s *Service) lapsed(rec *Record, nowMs int64) string {
	switch rec.Mode {
	case sentinel.ModePoll:
		if nowMs-rec.LastSeenMs >= s.Cfg.PollIdleExpiry.Milliseconds() {
			return "no poll within mcp_events.poll_idle_expiry"
		}
	case sentinel.ModePush:
		if liveStreams(rec, nowMs) == 0 && nowMs-rec.LastSeenMs >= s.Cfg.PushLinger.Milliseconds() {
			return "its last stream closed"
		}
	case sentinel.ModeWebhook:
		if rec.ExpiresMs != 0 && nowMs >= rec.ExpiresMs {
			return "its TTL ended without a refresh"
		}
	}
	return ""
}

// endIfUnchanged deletes the record if still holds of it as stored (with
// its revision, so a concurrent touch wins) and removes its sentinel.
func (s *Service) endIfUnchanged(ctx context.Context, id string, still func(*Record) bool, why string) bool {
	rec, rev, err := s.Store.Get(ctx, id)
	if err != nil || !still(rec) {
		return false
	}
	if err := s.Store.KV.Delete(ctx, recKey(id), jetstream.LastRevision(rev)); err != nil {
		if !errors.Is(err, jetstream.ErrKeyExists) && !errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
			s.Log.Warn("ending an mcp events subscription failed", "subscription", id, "err", err)
		}
		return false
	}
	s.dropSentinel(ctx, rec.SentinelID)
	if rec.Mode == sentinel.ModeWebhook && s.Webhooks != nil {
		s.Webhooks.dropConsumer(ctx, id)
	}
	s.Log.Info("mcp events subscription ended", "subscription", id, "mode", rec.Mode, "why", why)
	return true
}

// RunSweeper sweeps every Cfg.Sweep until ctx ends.
func (s *Service) RunSweeper(ctx context.Context) {
	t := time.NewTicker(s.Cfg.Sweep)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.Sweep(ctx)
		}
	}
}
