package subscriptions

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"time"

	"github.com/agentproto/sentinel"
)

// Push notification methods.
const (
	MethodActive    = "notifications/events/active"
	MethodEvent     = "notifications/events/event"
	MethodHeartbeat = "notifications/events/heartbeat"
	MethodError     = "notifications/events/error"
	// MethodTerminated ends the stream's subscription (the server removed
	// the sentinel behind it).
	MethodTerminated = "notifications/events/terminated"
)

type activeParams struct {
	Cursor    string `json:"cursor"`
	Truncated bool   `json:"truncated"`
}

type heartbeatParams struct {
	Cursor string `json:"cursor"`
}

// streamBatch bounds the events read per feed read of a stream.
const streamBatch = 100

// Stream serves one events/stream request until ctx ends (notify sends
// one notification; the JSON-RPC layer adds the stream's id to its _meta): it confirms the
// subscription (notifications/events/active), replays the feed after the
// cursor, delivers events as they arrive and sends a heartbeat with the
// position checked up to every Cfg.Heartbeat. The stream holds a lease on
// the push subscription, renewed at every heartbeat; when the last stream
// closes the subscription ends (after Cfg.PushLinger). It returns ctx's
// error once ctx ends, or the error that ended the stream.
func (s *Service) Stream(ctx context.Context, principal string, raw json.RawMessage, notify func(method string, params any) error) error {
	r, err := s.resolve(ctx, principal, raw)
	if err != nil {
		return err
	}
	streamID := newStreamID()
	lease := func() int64 { return s.now().Add(3 * s.cfg.Heartbeat).UnixMilli() }
	id := SubscriptionID(sentinel.ModePush, principal, "", r.Name, r.Canonical)
	rec, created, err := s.ensure(ctx, &Record{ID: id, Mode: sentinel.ModePush, Name: r.Name, Arguments: r.Canonical, Principal: principal}, r,
		func(rec *Record) {
			if rec.Streams == nil {
				rec.Streams = map[string]int64{}
			}
			rec.Streams[streamID] = lease()
		})
	if err != nil {
		return err
	}
	defer s.release(ctx, rec.ID, streamID)

	wake := make(chan struct{}, 1)
	unsubscribe, err := s.feed.onPublish(FeedFilter(rec.Mode, rec.ID), func() {
		select {
		case wake <- struct{}{}:
		default:
		}
	})
	if err != nil {
		return err
	}
	defer unsubscribe()

	first, last, err := s.feed.Head(ctx)
	if err != nil {
		return err
	}
	pos, truncated := last, false
	switch {
	case r.hasCursor:
		pos, truncated = startOf(r.after, rec.CreatedSeq, first, last)
		truncated = truncated || created // a new sentinel did not watch meanwhile
	case created:
		pos = rec.CreatedSeq
	}
	floor := s.floor(r.MaxAgeMs)
	if !r.hasCursor {
		floor = time.Time{}
	}
	// The first read decides truncated before the confirmation goes out.
	evs, skipped, more, err := s.feed.Read(ctx, rec.Mode, rec.ID, pos, streamBatch, floor)
	if err != nil {
		return err
	}
	cur, err := s.cursors.Sign(ctx, pos, r.bind)
	if err != nil {
		return err
	}
	if err := notify(MethodActive, activeParams{Cursor: cur, Truncated: truncated || skipped}); err != nil {
		return err
	}
	beat := time.NewTicker(s.cfg.Heartbeat)
	defer beat.Stop()
	for {
		for _, e := range evs {
			c, err := s.cursors.Sign(ctx, e.Seq, r.bind)
			if err != nil {
				return err
			}
			occ := occurrence(r.Name, e)
			occ.Cursor = &c
			if err := notify(MethodEvent, occ); err != nil {
				return err
			}
			pos = e.Seq
		}
		if more {
			if evs, _, more, err = s.feed.Read(ctx, rec.Mode, rec.ID, pos, streamBatch, time.Time{}); err != nil {
				return err
			}
			continue
		}
		heartbeat := false
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-wake:
		case <-beat.C:
			heartbeat = true
		}
		var head uint64
		if heartbeat {
			if _, head, err = s.feed.Head(ctx); err != nil {
				return err
			}
		}
		if evs, _, more, err = s.feed.Read(ctx, rec.Mode, rec.ID, pos, streamBatch, time.Time{}); err != nil {
			return err
		}
		if heartbeat && len(evs) == 0 {
			pos = max64(pos, head)
			c, err := s.cursors.Sign(ctx, pos, r.bind)
			if err != nil {
				return err
			}
			if err := notify(MethodHeartbeat, heartbeatParams{Cursor: c}); err != nil {
				return err
			}
			if cur := s.renew(ctx, rec.ID, streamID, lease()); cur != nil && s.sentinelGone(ctx, cur) {
				// Nothing routes to the subscription any more: say so
				// and close the stream (its final frame follows).
				return notify(MethodTerminated, map[string]any{"error": terminatedRemoved})
			}
		}
	}
}

// renew extends a stream's lease (best effort: a failure shortens it)
// and returns the record as stored (nil when that failed).
func (s *Service) renew(ctx context.Context, id, streamID string, until int64) *Record {
	rec, err := s.store.Update(ctx, id, func(rec *Record) error {
		if rec.Streams == nil {
			rec.Streams = map[string]int64{}
		}
		rec.Streams[streamID] = until
		rec.LastSeenMs = s.now().UnixMilli()
		return nil
	})
	if err != nil {
		if !errors.Is(err, sentinel.ErrNotFound) {
			s.log.Warn("renewing an mcp events stream lease failed", "subscription", id, "err", err)
		}
		return nil
	}
	return rec
}

// release drops a closed stream's lease; the subscription ends with its
// last stream when PushLinger is 0 (else the sweep ends it later).
func (s *Service) release(ctx context.Context, id, streamID string) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
	defer cancel()
	now := s.now().UnixMilli()
	rec, err := s.store.Update(cctx, id, func(rec *Record) error {
		delete(rec.Streams, streamID)
		rec.LastSeenMs = now
		return nil
	})
	if err != nil {
		if !errors.Is(err, sentinel.ErrNotFound) {
			s.log.Warn("releasing an mcp events stream lease failed", "subscription", id, "err", err)
		}
		return
	}
	if s.cfg.PushLinger == 0 && liveStreams(rec, now) == 0 {
		s.endIfUnchanged(cctx, id, func(r *Record) bool { return liveStreams(r, s.now().UnixMilli()) == 0 }, "its last stream closed", nil)
	}
}

func liveStreams(rec *Record, nowMs int64) int {
	n := 0
	for _, until := range rec.Streams {
		if until > nowMs {
			n++
		}
	}
	return n
}

func newStreamID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
