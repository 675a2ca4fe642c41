package subscriptions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentproto/sentinel"
)

// Feed is the feeds stream: each subscription's delivered events, one
// subject per event, positions being stream sequences.
type Feed struct {
	bus    FeedBus
	assets *Assets
}

// NewFeed returns the feeds of assets (OpenAssets), appending through b
// (*bus.Bus).
func NewFeed(b FeedBus, assets *Assets) *Feed { return &Feed{bus: b, assets: assets} }

// Stream is the feeds stream (webhook consumers are created on it).
func (f *Feed) Stream() jetstream.Stream { return f.assets.Feeds }

// stored is one feed event.
type stored struct {
	Seq  uint64
	Time time.Time
	Ev   sentinel.Event
}

// Append stores ev in a subscription's feed (idempotent per event id).
func (f *Feed) Append(ctx context.Context, mode, subID string, ev *sentinel.Event) (dup bool, err error) {
	raw, err := json.Marshal(ev)
	if err != nil {
		return false, fmt.Errorf("encode event %s: %w", ev.ID, err)
	}
	_, dup, err = appendFeed(ctx, f.bus, f.assets, mode, subID, sentinel.SeenDigest(ev.ID), raw)
	return dup, err
}

// Head returns the stream's first and last sequences (read through its
// leader). Nothing at or below last can appear later.
func (f *Feed) Head(ctx context.Context) (first, last uint64, err error) {
	info, err := f.assets.Feeds.Info(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("read the feeds stream: %w", err)
	}
	return info.State.FirstSeq, info.State.LastSeq, nil
}

// Read returns up to max events of a subscription's feed after position
// after, skipping (and reporting) those stored before floor; more reports
// that another event follows the last returned.
func (f *Feed) Read(ctx context.Context, mode, subID string, after uint64, max int, floor time.Time) (out []stored, skipped, more bool, err error) {
	filter := FeedFilter(mode, subID)
	next := after
	for len(out) <= max {
		m, err := f.assets.Feeds.GetMsg(ctx, next+1, jetstream.WithGetMsgSubject(filter))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			break
		}
		if err != nil {
			return nil, false, false, fmt.Errorf("read feed of %s: %w", subID, err)
		}
		next = m.Sequence
		if !floor.IsZero() && m.Time.Before(floor) {
			skipped = true
			continue
		}
		var ev sentinel.Event
		if json.Unmarshal(m.Data, &ev) != nil {
			continue
		}
		out = append(out, stored{Seq: m.Sequence, Time: m.Time, Ev: ev})
	}
	if len(out) > max {
		return out[:max], skipped, true, nil
	}
	return out, skipped, false, nil
}

// onPublish wakes fn whenever a message lands on subject of the feeds.
func (f *Feed) onPublish(subject string, fn func()) (func(), error) {
	return f.bus.OnPublish(subject, fn)
}
