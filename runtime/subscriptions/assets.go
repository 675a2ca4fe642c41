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

// feedStream is the feeds stream's spec for a retention (events kept for
// it). The stream has no direct get: every read goes through its leader,
// so a read never misses an event a cursor was computed past. Replicas
// are the bus's.
func feedStream(retention time.Duration) bus.StreamSpec {
	return bus.StreamSpec{Config: jetstream.StreamConfig{
		Name:        FeedStream,
		Description: "MCP Events subscription feeds, one subject per event",
		Subjects:    []string{feedPrefix + "*.*.*"},
		Storage:     jetstream.FileStorage,
		Retention:   jetstream.LimitsPolicy,
		Duplicates:  min(2*time.Minute, retention),
		MaxAge:      retention,
	}}
}

func bucketConfig() jetstream.KeyValueConfig {
	return jetstream.KeyValueConfig{
		Bucket: Bucket, Description: "MCP Events subscriptions and the cursor key (hold secrets)",
		Storage: jetstream.FileStorage,
	}
}

// ErrRetention is the refusal of a retention below one second.
var ErrRetention = errors.New("bus: mcp_events.retention must be at least 1s")

// AssetsFor are the feeds stream (events kept for retention) and the
// subscriptions bucket, for bus.Open; ErrRetention for a retention below
// one second.
func AssetsFor(retention time.Duration) (bus.Assets, error) {
	if retention < time.Second {
		return bus.Assets{}, ErrRetention
	}
	return bus.Assets{Streams: []bus.StreamSpec{feedStream(retention)}, Buckets: []jetstream.KeyValueConfig{bucketConfig()}}, nil
}

// OpenAssets provisions the feeds stream (events kept for retention) and
// the subscriptions bucket idempotently (answered without a request when
// bus.Open provisioned them) and returns them.
func OpenAssets(ctx context.Context, p bus.Provisioner, retention time.Duration) (*Assets, error) {
	if retention < time.Second {
		return nil, ErrRetention
	}
	s, err := p.EnsureStream(ctx, feedStream(retention))
	if err != nil {
		return nil, err
	}
	kv, err := p.EnsureKeyValue(ctx, bucketConfig())
	if err != nil {
		return nil, err
	}
	return &Assets{Feeds: s, KV: kv}, nil
}

// FeedBus is what the feeds need of the bus (*bus.Bus is one): a publish
// that stores one copy per subject, and a wake-up when a subject gets a
// message.
type FeedBus interface {
	PublishOnce(ctx context.Context, s jetstream.Stream, subj string, data []byte, msgID string) (seq uint64, dup bool, err error)
	OnPublish(subject string, fn func()) (func(), error)
}

// appendFeed stores one event in a subscription's feed. The subject names
// the event, so a second append of it returns the stored sequence and dup.
func appendFeed(ctx context.Context, b FeedBus, m *Assets, mode, subID, digest string, data []byte) (seq uint64, dup bool, err error) {
	seq, dup, err = b.PublishOnce(ctx, m.Feeds, FeedSubject(mode, subID, digest), data, subID+":"+digest)
	if err != nil {
		return 0, false, fmt.Errorf("bus: append feed event of %s: %w", subID, err)
	}
	return seq, dup, nil
}
