package bus

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"github.com/nats-io/nats.go/jetstream"
)

// Assets are the streams and buckets one feature owns, declared by its
// package. A feature's package declares its streams' and buckets' configs
// and subjects; bus only provisions them. The composition root lists every
// feature's for Open, which provisions them at once.
type Assets struct {
	Streams []StreamSpec
	Buckets []jetstream.KeyValueConfig
}

// Provisioner provisions a stream or a bucket from the config its owning
// package declares, idempotently. *Bus is one; a feature's opener takes
// it rather than the bus.
type Provisioner interface {
	EnsureStream(ctx context.Context, spec StreamSpec) (jetstream.Stream, error)
	EnsureKeyValue(ctx context.Context, cfg jetstream.KeyValueConfig) (jetstream.KeyValue, error)
}

var _ Provisioner = (*Bus)(nil)

// StreamSpec is how its owning package wants a stream provisioned: the
// config, and optionally how to tell an existing stream is as wanted
// (Same; sameStream when nil) and when an existing stream must be deleted
// and created anew because a setting cannot change in place (Recreate).
type StreamSpec struct {
	Config   jetstream.StreamConfig
	Same     func(have, want jetstream.StreamConfig) bool
	Recreate func(have jetstream.StreamConfig) bool
}

type provisionedStream struct {
	cfg jetstream.StreamConfig
	s   jetstream.Stream
}

type provisionedBucket struct {
	cfg jetstream.KeyValueConfig
	kv  jetstream.KeyValue
}

// EnsureKeyValue provisions a bucket whose config its owning package
// declares: created, or updated where it differs, idempotently. The bus's
// replica count applies unless cfg sets one (the zero Storage is file
// storage). A bucket this bus provisioned already with the same config
// (at Open) is returned without a request.
func (b *Bus) EnsureKeyValue(ctx context.Context, cfg jetstream.KeyValueConfig) (jetstream.KeyValue, error) {
	if cfg.Replicas == 0 {
		cfg.Replicas = b.Cfg.Replicas
	}
	b.mu.Lock()
	have, ok := b.buckets[cfg.Bucket]
	b.mu.Unlock()
	if ok && reflect.DeepEqual(have.cfg, cfg) {
		return have.kv, nil
	}
	kv, err := ensureKeyValue(ctx, b.js, cfg)
	if err != nil {
		return nil, fmt.Errorf("bus: provision bucket %s: %w", cfg.Bucket, err)
	}
	b.mu.Lock()
	b.buckets[cfg.Bucket] = provisionedBucket{cfg: cfg, kv: kv}
	b.mu.Unlock()
	return kv, nil
}

// EnsureStream provisions a stream whose config its owning package
// declares: created, or updated where it differs, idempotently, through
// the bounded retried attempts of every provisioning. The bus's replica
// count applies unless the config sets one. A stream this bus provisioned
// already with the same config (at Open) is returned without a request.
func (b *Bus) EnsureStream(ctx context.Context, spec StreamSpec) (jetstream.Stream, error) {
	want := spec.Config
	if want.Replicas == 0 {
		want.Replicas = b.Cfg.Replicas
	}
	b.mu.Lock()
	have, ok := b.streams[want.Name]
	b.mu.Unlock()
	if ok && reflect.DeepEqual(have.cfg, want) {
		return have.s, nil
	}
	same := spec.Same
	if same == nil {
		same = sameStream
	}
	s, err := provisionAsset(ctx, func(ctx context.Context) (jetstream.Stream, assetState, error) {
		s, err := b.js.Stream(ctx, want.Name)
		if err != nil {
			return nil, assetMissing, err
		}
		return s, stateOf(same(s.CachedInfo().Config, want), s.CachedInfo().Cluster), nil
	}, func(ctx context.Context) (jetstream.Stream, error) {
		if spec.Recreate != nil {
			if s, err := b.js.Stream(ctx, want.Name); err == nil && spec.Recreate(s.CachedInfo().Config) {
				if err := b.js.DeleteStream(ctx, want.Name); err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
					return nil, err
				}
			}
		}
		return b.js.CreateOrUpdateStream(ctx, want)
	})
	if err != nil {
		return nil, fmt.Errorf("bus: provision stream %s: %w", want.Name, err)
	}
	b.mu.Lock()
	b.streams[want.Name] = provisionedStream{cfg: want, s: s}
	b.mu.Unlock()
	return s, nil
}

// EnsureConsumer provisions a durable consumer of stream whose config its
// owning package declares, idempotently (writing only what differs).
func (b *Bus) EnsureConsumer(ctx context.Context, stream string, want jetstream.ConsumerConfig) (jetstream.Consumer, error) {
	c, err := ensureConsumer(ctx, b.js, stream, want)
	if err != nil {
		return nil, fmt.Errorf("bus: provision consumer %s: %w", want.Durable, err)
	}
	return c, nil
}

// Stream looks up an existing stream by name, with its current info (no
// provisioning): for views and tests that read a stream they do not own.
func (b *Bus) Stream(ctx context.Context, name string) (jetstream.Stream, error) {
	s, err := b.js.Stream(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("bus: stream %s: %w", name, err)
	}
	return s, nil
}

// KeyValue looks up an existing bucket by name (no provisioning).
func (b *Bus) KeyValue(ctx context.Context, bucket string) (jetstream.KeyValue, error) {
	kv, err := b.js.KeyValue(ctx, bucket)
	if err != nil {
		return nil, fmt.Errorf("bus: bucket %s: %w", bucket, err)
	}
	return kv, nil
}
