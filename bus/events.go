package bus

import (
	"context"
	"fmt"
	"hash/fnv"
	"strconv"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// The events stream is the bus's own, not a feature's: it is the node's
// partitioned, ordered log between every producer of events (the poll
// loop, push ingress, reconciliation) and the delivery workers, and its
// partition count, consumers and ack wait are part of the settings every
// node of a service agrees on (settings.go). Each partition has one
// durable consumer with one event in flight, which keeps order per
// sentinel; limits retention with a trim below the partitions' ack floors
// keeps it small (eventstrim.go).

// StreamEvents keeps the events with limits retention, trimmed below what
// every partition acknowledged (eventstrim.go).
const StreamEvents = "SENTINEL_EVENTS_V2"

const eventsPrefix = "sentinel.events.v2."

// Partition returns the event partition of a sentinel id (FNV-1a mod n).
func Partition(sentinelID string, n int) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(sentinelID))
	return int(h.Sum32() % uint32(n))
}

// EventSubject is the subject of a sentinel's events in its partition.
func EventSubject(partition int, sentinelID string) string {
	return eventsPrefix + strconv.Itoa(partition) + "." + sentinelID
}

// PartitionFilter is the filter subject of one partition's consumer.
func PartitionFilter(partition int) string {
	return eventsPrefix + strconv.Itoa(partition) + ".*"
}

// ConsumerName is the durable consumer name of one partition.
func ConsumerName(partition int) string { return fmt.Sprintf("deliver-%d", partition) }

// EventMsgID is the Nats-Msg-Id of an event published for a sentinel.
func EventMsgID(sentinelID, eventID string) string { return sentinelID + ":" + eventID }

func (b *Bus) eventsConfig() jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:         StreamEvents,
		Description:  "SentinelEvents, partitioned by sentinel id (limits retention, trimmed below the partitions' ack floors)",
		Subjects:     []string{eventsPrefix + "*.*"},
		Storage:      jetstream.FileStorage,
		Retention:    jetstream.LimitsPolicy,
		Duplicates:   b.Cfg.EventsDuplicates,
		Replicas:     b.Cfg.Replicas,
		MaxConsumers: -1,
	}
}

func (b *Bus) consumerConfig(p int) jetstream.ConsumerConfig {
	return jetstream.ConsumerConfig{
		Durable:       ConsumerName(p),
		Description:   "ordered delivery of one event partition",
		FilterSubject: PartitionFilter(p),
		AckPolicy:     jetstream.AckExplicitPolicy,
		DeliverPolicy: jetstream.DeliverAllPolicy,
		// One message in flight keeps order per sentinel.
		MaxAckPending: 1,
		AckWait:       b.Cfg.AckWait,
		MaxDeliver:    -1,
	}
}

// PartitionConsumer returns the durable consumer of partition p.
func (b *Bus) PartitionConsumer(ctx context.Context, p int) (jetstream.Consumer, error) {
	c, err := b.js.Consumer(ctx, StreamEvents, ConsumerName(p))
	if err != nil {
		return nil, fmt.Errorf("bus: consumer %s: %w", ConsumerName(p), err)
	}
	return c, nil
}

// PublishEvent publishes an encoded event for a sentinel into its partition
// with Nats-Msg-Id = <sentinelId>:<eventId> and waits for the PubAck,
// retrying through a leader election. dup reports that the stream dropped
// it as a duplicate.
func (b *Bus) PublishEvent(ctx context.Context, sentinelID, eventID string, data []byte) (dup bool, err error) {
	subj := EventSubject(Partition(sentinelID, b.Cfg.Partitions), sentinelID)
	ack, err := b.publishRetrying(ctx, subj, data, EventMsgID(sentinelID, eventID))
	if err != nil {
		return false, fmt.Errorf("bus: publish event %s: %w", eventID, StorageCoded(err))
	}
	return ack.Duplicate, nil
}

// Partitions is the events stream's partition count.
func (b *Bus) Partitions() int { return b.Cfg.Partitions }

// AckWait is the partition consumers' ack wait.
func (b *Bus) AckWait() time.Duration { return b.Cfg.AckWait }
