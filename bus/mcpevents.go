package bus

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// MCP Events (SEP-3415) assets: the feeds stream, where the sentinel of
// each subscription stores the events it routes (one subject per event,
// so a copy is refused forever), and one bucket for the subscription
// records and the cursor signing key.
const (
	StreamMCPEvents = "SENTINEL_MCP_EVENTS"
	BucketMCPEvents = "sentinel_mcp_events"
	mcpFeedPrefix   = "sentinel.mcpevents."
)

// MCPFeedSubject is the subject of one event in the feed of a
// subscription of a delivery mode (poll, push, webhook).
func MCPFeedSubject(mode, subID, digest string) string {
	return mcpFeedPrefix + mode + "." + subID + "." + digest
}

// MCPFeedFilter matches every event of one subscription's feed.
func MCPFeedFilter(mode, subID string) string { return mcpFeedPrefix + mode + "." + subID + ".*" }

// MCPWebhookConsumer is the durable consumer delivering one webhook
// subscription's feed (one event in flight: in order, acked by the
// endpoint's 2xx).
func MCPWebhookConsumer(subID string) string { return "mcp-webhook-" + subID }

// MCPEvents is the provisioned MCP Events surface.
type MCPEvents struct {
	Feeds jetstream.Stream
	KV    jetstream.KeyValue
}

// OpenMCPEvents provisions the feeds stream (events kept for retention)
// and the subscriptions bucket idempotently. The stream has no direct get:
// every read goes through its leader, so a read never misses an event a
// cursor was computed past.
func (b *Bus) OpenMCPEvents(ctx context.Context, retention time.Duration) (*MCPEvents, error) {
	if retention < time.Second {
		return nil, errors.New("bus: mcp_events.retention must be at least 1s")
	}
	dups := min(2*time.Minute, retention)
	s, err := ensureStream(ctx, b.JS, jetstream.StreamConfig{
		Name:        StreamMCPEvents,
		Description: "MCP Events subscription feeds, one subject per event",
		Subjects:    []string{mcpFeedPrefix + "*.*.*"},
		Storage:     jetstream.FileStorage,
		Retention:   jetstream.LimitsPolicy,
		Duplicates:  dups,
		MaxAge:      retention,
		Replicas:    b.Cfg.Replicas,
	})
	if err != nil {
		return nil, fmt.Errorf("bus: provision stream %s: %w", StreamMCPEvents, err)
	}
	kv, err := ensureKeyValue(ctx, b.JS, jetstream.KeyValueConfig{
		Bucket: BucketMCPEvents, Description: "MCP Events subscriptions and the cursor key (hold secrets)",
		Storage: jetstream.FileStorage, Replicas: b.Cfg.Replicas,
	})
	if err != nil {
		return nil, fmt.Errorf("bus: provision bucket %s: %w", BucketMCPEvents, err)
	}
	return &MCPEvents{Feeds: s, KV: kv}, nil
}

// AppendFeed stores one event in a subscription's feed. The subject names
// the event, so a second append of it returns the stored sequence and dup.
func (b *Bus) AppendFeed(ctx context.Context, m *MCPEvents, mode, subID, digest string, data []byte) (seq uint64, dup bool, err error) {
	subj := MCPFeedSubject(mode, subID, digest)
	ack, err := b.JS.Publish(ctx, subj, data, jetstream.WithMsgID(subID+":"+digest), jetstream.WithExpectLastSequencePerSubject(0))
	if err == nil {
		return ack.Sequence, ack.Duplicate, nil
	}
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence || apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant) {
		if last, gerr := m.Feeds.GetLastMsgForSubject(ctx, subj); gerr == nil {
			return last.Sequence, true, nil
		}
		return 0, true, nil
	}
	return 0, false, fmt.Errorf("bus: append feed event of %s: %w", subID, err)
}
