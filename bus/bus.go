package bus

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/sync/errgroup"
)

// Bus is the provisioned JetStream surface: the connection, the bus's own
// assets (the setup bucket of the shared settings, the locks bucket of the
// Locker, the partitioned events stream and its consumers) and the handles
// of every stream and bucket it provisioned for the features that own
// them. It is safe for concurrent use. Features never reach through it:
// each takes the handle (jetstream.Stream, jetstream.KeyValue) or the
// small interface it needs.
type Bus struct {
	// Cfg is the bus config Open ran with (replicas resolved).
	Cfg Config

	nc     *nats.Conn
	js     jetstream.JetStream
	setup  jetstream.KeyValue
	locks  jetstream.KeyValue
	events jetstream.Stream

	// trims is what TrimEvents purged last, per partition.
	trims trimmed

	mu sync.Mutex
	// provisioned are the handles of the streams and buckets this bus
	// provisioned, by name, with the config each was provisioned with
	// (mu must be held).
	streams map[string]provisionedStream
	buckets map[string]provisionedBucket
}

// Open provisions every stream, bucket and consumer idempotently
// (create-or-update with explicit configs, writing only what differs) and
// returns the bus: the bus's own first (the setup bucket, where the
// shared settings are agreed before anything else is written), then the
// events stream, the locks bucket and every asset of assets (the streams
// and buckets features own; their packages declare the configs and the
// composition root lists them) at once, then the partition consumers. It
// fails fast when provisioning fails.
func Open(ctx context.Context, nc *nats.Conn, cfg Config, assets ...Assets) (*Bus, error) {
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
	b := &Bus{nc: nc, js: js, Cfg: cfg, streams: map[string]provisionedStream{}, buckets: map[string]provisionedBucket{}}
	// The setup bucket first: the shared settings are agreed before any
	// stream, bucket or consumer is written with this node's values.
	if b.setup, err = b.EnsureKeyValue(ctx, setupBucket()); err != nil {
		return nil, err
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
	g.Go(func() (err error) {
		b.events, err = b.EnsureStream(gctx, StreamSpec{Config: b.eventsConfig()})
		return err
	})
	g.Go(func() (err error) { b.locks, err = b.EnsureKeyValue(gctx, locksBucket()); return err })
	for _, as := range assets {
		for _, spec := range as.Streams {
			g.Go(func() error { _, err := b.EnsureStream(gctx, spec); return err })
		}
		for _, bk := range as.Buckets {
			g.Go(func() error { _, err := b.EnsureKeyValue(gctx, bk); return err })
		}
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

// Close drains the client connection so in-flight acks complete.
func (b *Bus) Close() error {
	if b == nil || b.nc == nil {
		return nil
	}
	if err := b.nc.Drain(); err != nil && !errors.Is(err, nats.ErrConnectionClosed) {
		return fmt.Errorf("bus: drain: %w", err)
	}
	return nil
}
