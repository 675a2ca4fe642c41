package poll

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/runtime/metrics"
)

// Origins of published events (a metric label).
const (
	OriginPoll = "poll"
	OriginPush = "push"
)

// EventPublisher stores one event in its sentinel's partition of the
// events stream (*bus.Bus is one: bus.PublishEvent).
type EventPublisher interface {
	PublishEvent(ctx context.Context, sentinelID, eventID string, data []byte) (dup bool, err error)
}

// Publisher publishes a sentinel's events into its partition of the events
// stream with Nats-Msg-Id = <sentinelId>:<eventId>, waiting for each
// PubAck. Concurrent calls for one sentinel are safe: the stream drops
// duplicates and the partition consumer serializes delivery.
type Publisher struct {
	events  EventPublisher
	metrics *metrics.Metrics
}

// NewPublisher returns a publisher into events (*bus.Bus), counting on m
// (nil counts nothing).
func NewPublisher(events EventPublisher, m *metrics.Metrics) *Publisher {
	return &Publisher{events: events, metrics: m}
}

// Publish publishes events in order, each with its summary clipped to
// sentinel.MaxSummaryBytes (the one ingest point of polled and pushed
// events). It returns how many were new (not dropped as duplicates); on
// error, events before the failing one are stored and the rest are not.
func (p *Publisher) Publish(ctx context.Context, sentinelID string, events []sentinel.Event, origin string) (int, error) {
	fresh := 0
	for i := range events {
		clipped := sentinel.ClipSummary(events[i])
		ev := &clipped
		raw, err := json.Marshal(ev)
		if err != nil {
			return fresh, fmt.Errorf("encode event %s: %w", ev.ID, err)
		}
		start := time.Now()
		dup, err := p.events.PublishEvent(ctx, sentinelID, ev.ID, raw)
		p.metrics.StepSince(metrics.StepPublish, start)
		if err != nil {
			return fresh, err
		}
		if dup {
			p.metrics.IncVec(func(m *metrics.Metrics) promCounterVec { return m.EventsDuplicate }, origin)
			continue
		}
		fresh++
		p.metrics.IncVec(func(m *metrics.Metrics) promCounterVec { return m.EventsPublished }, origin)
	}
	return fresh, nil
}
