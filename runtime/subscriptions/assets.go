package subscriptions

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentproto/sentinel/bus"
)

// MCP Events (SEP-3415) assets: the feeds stream, where the sentinel of
// each subscription stores the events it routes (one subject per event,
// so a copy is refused forever), and one bucket for the subscription
// records and the cursor signing key. They are this package's: bus only
// provisions them from these configs.
const (
	FeedStream = "SENTINEL_MCP_EVENTS"
	Bucket     = "sentinel_mcp_events"
	feedPrefix = "sentinel.mcpevents."
)

// FeedSubject is the subject of one event in the feed of a
// subscription of a delivery mode (poll, push, webhook).
func FeedSubject(mode, subID, digest string) string {
	return feedPrefix + mode + "." + subID + "." + digest
}

// FeedFilter matches every event of one subscription's feed.
func FeedFilter(mode, subID string) string { return feedPrefix + mode + "." + subID + ".*" }

// WebhookConsumer is the durable consumer delivering one webhook
// subscription's feed (one event in flight: in order, acked by the
// endpoint's 2xx).
func WebhookConsumer(subID string) string { return "mcp-webhook-" + subID }

// Assets is the provisioned MCP Events surface.
type Assets struct {
	Feeds jetstream.Stream
	KV    jetstream.KeyValue
}

// OpenAssets provisions the feeds stream (events kept for retention) and
// the subscriptions bucket idempotently. The stream has no direct get:
// every read goes through its leader, so a read never misses an event a
// cursor was computed past.
func OpenAssets(ctx context.Context, b *bus.Bus, retention time.Duration) (*Assets, error) {
	if retention < time.Second {
		return nil, errors.New("bus: mcp_events.retention must be at least 1s")
	}
	dups := min(2*time.Minute, retention)
	s, err := b.EnsureStream(ctx, bus.StreamSpec{Config: jetstream.StreamConfig{
		Name:        FeedStream,
		Description: "MCP Events subscription feeds, one subject per event",
		Subjects:    []string{feedPrefix + "*.*.*"},
		Storage:     jetstream.FileStorage,
		Retention:   jetstream.LimitsPolicy,
		Duplicates:  dups,
		MaxAge:      retention,
		Replicas:    b.Cfg.Replicas,
	}})
	if err != nil {
		return nil, err
	}
	kv, err := b.EnsureKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket: Bucket, Description: "MCP Events subscriptions and the cursor key (hold secrets)",
		Storage: jetstream.FileStorage, Replicas: b.Cfg.Replicas,
	})
	if err != nil {
		return nil, err
	}
	return &Assets{Feeds: s, KV: kv}, nil
}

// appendFeed stores one event in a subscription's feed. The subject names
// the event, so a second append of it returns the stored sequence and dup.
func appendFeed(ctx context.Context, b *bus.Bus, m *Assets, mode, subID, digest string, data []byte) (seq uint64, dup bool, err error) {
	seq, dup, err = b.PublishOnce(ctx, m.Feeds, FeedSubject(mode, subID, digest), subID+":"+digest, data)
	if err != nil {
		return 0, false, fmt.Errorf("bus: append feed event of %s: %w", subID, err)
	}
	return seq, dup, nil
}
