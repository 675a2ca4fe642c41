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
	recs, err := s.store.List(ctx)
	if err != nil {
		s.log.Warn("listing mcp events subscriptions failed", "err", err)
		return
	}
	for _, rec := range recs {
		if why, term := s.lapsed(rec, s.now().UnixMilli()); why != "" {
			s.endIfUnchanged(ctx, rec.ID, func(r *Record) bool { w, _ := s.lapsed(r, s.now().UnixMilli()); return w != "" }, why, term)
			continue
		}
		if rec.Mode == sentinel.ModeWebhook && s.sentinelGone(ctx, rec) {
			s.endIfUnchanged(ctx, rec.ID, func(r *Record) bool { return r.SentinelID == rec.SentinelID }, "its sentinel was removed", terminatedRemoved)
		}
	}
}

// sentinelGone reports whether the sentinel behind a webhook subscription
// was removed (an operator's sentinel rm, or its until ended it): nothing
// routes to the subscription any more, and no refresh may come to notice
// (a no-expiry one), so it ends. Poll and push re-create theirs on the
// client's next call.
func (s *Service) sentinelGone(ctx context.Context, rec *Record) bool {
	if rec.SentinelID == "" {
		return false
	}
	_, err := s.sentinels.Get(ctx, rec.SentinelID)
	return err != nil && (errors.Is(err, sentinel.ErrNotFound) || isNotFound(err))
}

// lapsed names why a subscription ended, or "", and the terminated
// envelope a webhook subscription gets for it.
func (s *Service) lapsed(rec *Record, nowMs int64) (string, *termination) {
	switch rec.Mode {
	case sentinel.ModePoll:
		if nowMs-rec.LastSeenMs >= s.cfg.PollIdleExpiry.Milliseconds() {
			return "no poll within mcp_events.poll_idle_expiry", nil
		}
	case sentinel.ModePush:
		if liveStreams(rec, nowMs) == 0 && nowMs-rec.LastSeenMs >= s.cfg.PushLinger.Milliseconds() {
			return "its last stream closed", nil
		}
	case sentinel.ModeWebhook:
		if rec.ExpiresMs != 0 && nowMs >= rec.ExpiresMs {
			return "its TTL ended without a refresh", terminatedExpired
		}
		if rec.ExpiresMs == 0 && rec.SuspendedMs != 0 && nowMs-rec.SuspendedMs >= s.cfg.DropSuspendedAfter.Milliseconds() {
			cat := "connection_refused"
			if rec.Status.LastError != nil {
				cat = *rec.Status.LastError
			}
			return "no-expiry delivery stayed suspended for mcp_events.drop_suspended_after", terminatedFailing(cat)
		}
	}
	return "", nil
}

// endIfUnchanged deletes the record if still holds of it as stored (with
// its revision, so a concurrent touch wins) and removes its sentinel; a
// webhook subscription ended with term gets a terminated envelope.
func (s *Service) endIfUnchanged(ctx context.Context, id string, still func(*Record) bool, why string, term *termination) bool {
	rec, rev, err := s.store.Get(ctx, id)
	if err != nil || !still(rec) {
		return false
	}
	if err := s.store.kv.Delete(ctx, recKey(id), jetstream.LastRevision(rev)); err != nil {
		if !errors.Is(err, jetstream.ErrKeyExists) && !errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
			s.log.Warn("ending an mcp events subscription failed", "subscription", id, "err", err)
		}
		return false
	}
	s.dropSentinel(ctx, rec.SentinelID)
	if rec.Mode == sentinel.ModeWebhook && s.webhooks != nil {
		s.webhooks.dropConsumer(ctx, id)
		if term != nil {
			s.webhooks.sendTerminated(rec, term)
		}
	}
	s.log.Info("mcp events subscription ended", "subscription", id, "mode", rec.Mode, "why", why)
	return true
}

// RunSweeper sweeps every Cfg.Sweep until ctx ends.
func (s *Service) RunSweeper(ctx context.Context) {
	t := time.NewTicker(s.cfg.Sweep)
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
