package bus

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/sync/errgroup"
)

// Bus is the provisioned JetStream surface: streams, KV buckets and the
// partition consumers. Its fields are safe for concurrent use.
type Bus struct {
	NC  *nats.Conn
	JS  jetstream.JetStream
	Cfg Config

	Events    jetstream.Stream
	Inbox     jetstream.Stream
	Parked    jetstream.Stream
	Lifecycle jetstream.Stream

	Sentinels jetstream.KeyValue
	Seen      jetstream.KeyValue
	Hooks     jetstream.KeyValue
	Creds     jetstream.KeyValue
	Setup     jetstream.KeyValue
	Sessions  jetstream.KeyValue
	Follows   jetstream.KeyValue
	Locks     jetstream.KeyValue
	Cursors   jetstream.KeyValue
	Tombstone jetstream.KeyValue
	Nodes     jetstream.KeyValue
	Leases    jetstream.KeyValue

	// trims is what TrimEvents purged last, per partition.
	trims trimmed
}

// Open provisions every stream, bucket and consumer idempotently
// (create-or-update with explicit configs) and returns the bus. streams
// are the streams features own (their packages declare the configs; the
// composition root lists them), provisioned at once with the bus's own.
// It fails fast when provisioning fails.
func Open(ctx context.Context, nc *nats.Conn, cfg Config, streams ...StreamSpec) (*Bus, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Replicas == 0 {
		cfg.Replicas = 1
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("bus: jetstream: %w", err)
	}
	b := &Bus{NC: nc, JS: js, Cfg: cfg}
	// The setup bucket first: the shared settings are agreed before any
	// stream, bucket or consumer is written with this node's values.
	setup := jetstream.KeyValueConfig{Bucket: BucketSetup, Description: "provider setup ledger", Storage: jetstream.FileStorage, Replicas: cfg.Replicas}
	if b.Setup, err = ensureKeyValue(ctx, js, setup); err != nil {
		return nil, fmt.Errorf("bus: provision bucket %s: %w", BucketSetup, err)
	}
	if cfg.Replicas > 1 {
		if err := b.agreePartitions(ctx); err != nil {
			return nil, err
		}
	}
	if err := b.agreeSettings(ctx); err != nil {
		return nil, err
	}
	// Every stream and bucket is provisioned at once, then every consumer:
	// a new R3 asset costs a meta-group write and a raft election, and
	// one after another they made a cluster's first boot the sum of ~40 of
	// them (docs/cluster.md, "Start-up").
	g, gctx := errgroup.WithContext(ctx)
	own := map[string]*jetstream.Stream{StreamEvents: &b.Events, StreamInbox: &b.Inbox, StreamParked: &b.Parked, StreamLifecycle: &b.Lifecycle}
	for _, sc := range b.streamConfigs() {
		g.Go(func() error {
			s, err := ensureStream(gctx, js, sc)
			if err != nil {
				return fmt.Errorf("bus: provision stream %s: %w", sc.Name, err)
			}
			*own[sc.Name] = s
			return nil
		})
	}
	for _, spec := range streams {
		g.Go(func() error { _, err := b.EnsureStream(gctx, spec); return err })
	}
	buckets := []struct {
		cfg jetstream.KeyValueConfig
		dst *jetstream.KeyValue
	}{
		{jetstream.KeyValueConfig{Bucket: BucketSentinels, Description: "sentinel records"}, &b.Sentinels},
		{jetstream.KeyValueConfig{Bucket: BucketSeen, Description: "seen event ids per sentinel", LimitMarkerTTL: SeenMarkerTTL}, &b.Seen},
		{jetstream.KeyValueConfig{Bucket: BucketHooks, Description: "webhook hook records (hold secrets)"}, &b.Hooks},
		{jetstream.KeyValueConfig{Bucket: BucketCreds, Description: "provider credentials (hold secrets)"}, &b.Creds},
		{jetstream.KeyValueConfig{Bucket: BucketSessions, Description: "session registry"}, &b.Sessions},
		{jetstream.KeyValueConfig{Bucket: BucketFollows, Description: "session follows"}, &b.Follows},
		{jetstream.KeyValueConfig{Bucket: BucketLocks, Description: "short leases and locks", TTL: LockTTL}, &b.Locks},
		{jetstream.KeyValueConfig{Bucket: BucketCursors, Description: "read cursors"}, &b.Cursors},
		{jetstream.KeyValueConfig{Bucket: BucketTombstone, Description: "provider cancels to retry"}, &b.Tombstone},
		{jetstream.KeyValueConfig{Bucket: BucketNodes, Description: "live nodes (heartbeats; a key ages out MemberTTL after its node's last beat)", TTL: cfg.MemberTTL}, &b.Nodes},
		{jetstream.KeyValueConfig{Bucket: BucketLeases, Description: "work ownership leases (a lease ages out LeaseTTL after its last renewal)", TTL: cfg.LeaseTTL}, &b.Leases},
	}
	for _, bk := range buckets {
		bk.cfg.Storage = jetstream.FileStorage
		bk.cfg.Replicas = cfg.Replicas
		g.Go(func() error {
			kv, err := ensureKeyValue(gctx, js, bk.cfg)
			if err != nil {
				return fmt.Errorf("bus: provision bucket %s: %w", bk.cfg.Bucket, err)
			}
			*bk.dst = kv
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if err := b.retireExtraPartitions(ctx); err != nil {
		return nil, err
	}
	g, gctx = errgroup.WithContext(ctx)
	for p := 0; p < cfg.Partitions; p++ {
		g.Go(func() error {
			if _, err := ensureConsumer(gctx, js, StreamEvents, b.consumerConfig(p)); err != nil {
				return fmt.Errorf("bus: provision consumer %s: %w", ConsumerName(p), err)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return b, nil
}

// partitionsKey pins a cluster's partition count in the setup bucket.
const partitionsKey = "_bus.partitions"

// agreePartitions pins the partition count the first node of a cluster
// provisions, and refuses a node configured with another: other nodes
// pull from the consumers and hash sentinels with their count, so one
// node's different count would strand events and break order.
func (b *Bus) agreePartitions(ctx context.Context) error {
	want := strconv.Itoa(b.Cfg.Partitions)
	return provision(ctx, func(ctx context.Context) error {
		_, err := b.Setup.Create(ctx, partitionsKey, []byte(want))
		if err == nil {
			return nil
		}
		if !errors.Is(err, jetstream.ErrKeyExists) {
			return err
		}
		e, gerr := b.Setup.Get(ctx, partitionsKey)
		if gerr != nil {
			return gerr
		}
		if have := string(e.Value()); have != want {
			return &jetstream.APIError{Code: 400, Description: fmt.Sprintf("the cluster runs with bus.partitions=%s and this node is configured with %s: use the same count on every node", have, want)}
		}
		return nil
	})
}

// retireExtraPartitions handles a changed partition count. Changing it
// moves sentinels to other partitions, so it is refused while the events
// stream still holds undelivered events (their order per sentinel would
// break); otherwise the consumers of partitions beyond the count go.
func (b *Bus) retireExtraPartitions(ctx context.Context) error {
	names := b.Events.ConsumerNames(ctx)
	existing, extra := 0, []string{}
	for name := range names.Name() {
		var p int
		if _, err := fmt.Sscanf(name, "deliver-%d", &p); err != nil {
			continue
		}
		existing++
		if p >= b.Cfg.Partitions {
			extra = append(extra, name)
		}
	}
	if err := names.Err(); err != nil {
		return fmt.Errorf("bus: list consumers: %w", err)
	}
	if existing == 0 || existing == b.Cfg.Partitions {
		return nil
	}
	if b.Cfg.Replicas > 1 {
		return nil // a cluster's count is pinned by agreePartitions
	}
	undelivered, err := b.undelivered(ctx)
	if err != nil {
		return err
	}
	if undelivered > 0 {
		return fmt.Errorf("bus: the events stream still holds %d undelivered events across %d partitions: start with bus.partitions=%d until they are delivered, then change it", undelivered, existing, existing)
	}
	for _, name := range extra {
		if err := b.Events.DeleteConsumer(ctx, name); err != nil {
			return fmt.Errorf("bus: retire consumer %s: %w", name, err)
		}
	}
	return nil
}

func (b *Bus) streamConfigs() []jetstream.StreamConfig {
	c := b.Cfg
	return []jetstream.StreamConfig{
		{
			Name:         StreamEvents,
			Description:  "SentinelEvents, partitioned by sentinel id (limits retention, trimmed below the partitions' ack floors)",
			Subjects:     []string{eventsPrefix + "*.*"},
			Storage:      jetstream.FileStorage,
			Retention:    jetstream.LimitsPolicy,
			Duplicates:   c.EventsDuplicates,
			Replicas:     c.Replicas,
			MaxConsumers: -1,
		},
		{
			Name:        StreamInbox,
			Description: "AIP-46 session inbox messages, one subject per message",
			Subjects:    []string{InboxAll},
			Storage:     jetstream.FileStorage,
			Retention:   jetstream.LimitsPolicy,
			Duplicates:  c.InboxDuplicates,
			MaxAge:      c.InboxMaxAge,
			Replicas:    c.Replicas,
			AllowDirect: true,
		},
		{
			Name:        StreamParked,
			Description: "undeliverable events and digests",
			Subjects:    []string{ParkedAll},
			Storage:     jetstream.FileStorage,
			Retention:   jetstream.LimitsPolicy,
			MaxAge:      c.ParkedMaxAge,
			Replicas:    c.Replicas,
			AllowDirect: true,
		},
		{
			Name:        StreamLifecycle,
			Description: "session lifecycle events",
			Subjects:    []string{LifecycleAll},
			Storage:     jetstream.FileStorage,
			Retention:   jetstream.LimitsPolicy,
			MaxAge:      7 * 24 * time.Hour,
			Duplicates:  c.InboxDuplicates,
			Replicas:    c.Replicas,
		},
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
	c, err := b.JS.Consumer(ctx, StreamEvents, ConsumerName(p))
	if err != nil {
		return nil, fmt.Errorf("bus: consumer %s: %w", ConsumerName(p), err)
	}
	return c, nil
}

// PublishEvent publishes an encoded event for a sentinel into its partition
// with Nats-Msg-Id = <sentinelId>:<eventId> and waits for the PubAck.
// dup reports that the stream dropped it as a duplicate.
func (b *Bus) PublishEvent(ctx context.Context, sentinelID, eventID string, data []byte) (dup bool, err error) {
	subj := EventSubject(Partition(sentinelID, b.Cfg.Partitions), sentinelID)
	ack, err := b.publishRetrying(ctx, subj, data, EventMsgID(sentinelID, eventID))
	if err != nil {
		return false, fmt.Errorf("bus: publish event %s: %w", eventID, storageCoded(err))
	}
	return ack.Duplicate, nil
}

// PublishInbox stores one inbox message under its own subject with
// Nats-Msg-Id = msgID and an expected last subject sequence of 0, so a
// second copy is refused forever. It returns the stream sequence of the
// stored message (the existing one for a duplicate) and whether it was a
// duplicate.
func (b *Bus) PublishInbox(ctx context.Context, sessionID, msgID string, data []byte) (seq uint64, dup bool, err error) {
	subj := InboxSubject(sessionID, msgID)
	ack, err := b.JS.Publish(ctx, subj, data, jetstream.WithMsgID(msgID), jetstream.WithExpectLastSequencePerSubject(0))
	if err == nil {
		return ack.Sequence, ack.Duplicate, nil
	}
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence || apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant) {
		m, gerr := b.Inbox.GetLastMsgForSubject(ctx, subj)
		if gerr != nil {
			return 0, true, nil
		}
		return m.Sequence, true, nil
	}
	return 0, false, fmt.Errorf("bus: publish inbox message %s: %w", msgID, storageCoded(err))
}

// Publish publishes data on subj with an optional message id and waits for
// the PubAck.
func (b *Bus) Publish(ctx context.Context, subj string, data []byte, msgID string) (uint64, error) {
	var opts []jetstream.PublishOpt
	if msgID != "" {
		opts = append(opts, jetstream.WithMsgID(msgID))
	}
	ack, err := b.JS.Publish(ctx, subj, data, opts...)
	if err != nil {
		return 0, fmt.Errorf("bus: publish %s: %w", subj, storageCoded(err))
	}
	return ack.Sequence, nil
}

// PublishRetrying publishes data on subj with Nats-Msg-Id = msgID and
// waits for the PubAck, retrying with the same id through a leader
// election (for up to Cfg.PublishRetry): a retry of a publish that landed
// is a duplicate, never a second copy. dup reports a duplicate.
func (b *Bus) PublishRetrying(ctx context.Context, subj string, data []byte, msgID string) (seq uint64, dup bool, err error) {
	ack, err := b.publishRetrying(ctx, subj, data, msgID)
	if err != nil {
		return 0, false, fmt.Errorf("bus: publish %s: %w", subj, storageCoded(err))
	}
	return ack.Sequence, ack.Duplicate, nil
}

// Close drains the client connection so in-flight acks complete.
func (b *Bus) Close() error {
	if b == nil || b.NC == nil {
		return nil
	}
	if err := b.NC.Drain(); err != nil && !errors.Is(err, nats.ErrConnectionClosed) {
		return fmt.Errorf("bus: drain: %w", err)
	}
	return nil
}
