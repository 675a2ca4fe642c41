package bus

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// EnsureKeyValue provisions a bucket whose config its owning package
// declares (rule 10: features own their buckets; bus only provisions):
// created, or updated where it differs, idempotently. The bus's replica
// count applies unless cfg sets one (the zero Storage is file storage).
func (b *Bus) EnsureKeyValue(ctx context.Context, cfg jetstream.KeyValueConfig) (jetstream.KeyValue, error) {
	if cfg.Replicas == 0 {
		cfg.Replicas = b.Cfg.Replicas
	}
	kv, err := ensureKeyValue(ctx, b.JS, cfg)
	if err != nil {
		return nil, fmt.Errorf("bus: provision bucket %s: %w", cfg.Bucket, err)
	}
	return kv, nil
}

// StreamSpec is how its owning package wants a stream provisioned: the
// config, and optionally how to tell an existing stream is as wanted
// (Same; sameStream when nil) and when an existing stream must be deleted
// and created anew because a setting cannot change in place (Recreate).
type StreamSpec struct {
	Config   jetstream.StreamConfig
	Same     func(have, want jetstream.StreamConfig) bool
	Recreate func(have jetstream.StreamConfig) bool
}

// EnsureStream provisions a stream whose config its owning package
// declares (rule 10: features own their streams; bus only provisions):
// created, or updated where it differs, idempotently, through the bounded
// retried attempts of every provisioning. The bus's replica count applies
// unless the config sets one.
func (b *Bus) EnsureStream(ctx context.Context, spec StreamSpec) (jetstream.Stream, error) {
	want := spec.Config
	if want.Replicas == 0 {
		want.Replicas = b.Cfg.Replicas
	}
	same := spec.Same
	if same == nil {
		same = sameStream
	}
	s, err := provisionAsset(ctx, func(ctx context.Context) (jetstream.Stream, assetState, error) {
		s, err := b.JS.Stream(ctx, want.Name)
		if err != nil {
			return nil, assetMissing, err
		}
		return s, stateOf(same(s.CachedInfo().Config, want), s.CachedInfo().Cluster), nil
	}, func(ctx context.Context) (jetstream.Stream, error) {
		if spec.Recreate != nil {
			if s, err := b.JS.Stream(ctx, want.Name); err == nil && spec.Recreate(s.CachedInfo().Config) {
				if err := b.JS.DeleteStream(ctx, want.Name); err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
					return nil, err
				}
			}
		}
		return b.JS.CreateOrUpdateStream(ctx, want)
	})
	if err != nil {
		return nil, fmt.Errorf("bus: provision stream %s: %w", want.Name, err)
	}
	return s, nil
}

// PublishOnce stores data under subj, a subject that names one message,
// with Nats-Msg-Id = msgID and an expected last subject sequence of 0, so
// a second copy is refused forever, not only inside the duplicates
// window. It returns the stream sequence of the stored message (the
// existing one, read from s, for a duplicate; 0 when that read fails) and
// whether it was a duplicate. The error is the publish's, unwrapped.
func (b *Bus) PublishOnce(ctx context.Context, s jetstream.Stream, subj, msgID string, data []byte) (seq uint64, dup bool, err error) {
	ack, err := b.JS.Publish(ctx, subj, data, jetstream.WithMsgID(msgID), jetstream.WithExpectLastSequencePerSubject(0))
	if err == nil {
		return ack.Sequence, ack.Duplicate, nil
	}
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence || apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant) {
		if last, gerr := s.GetLastMsgForSubject(ctx, subj); gerr == nil {
			return last.Sequence, true, nil
		}
		return 0, true, nil
	}
	return 0, false, err
}

// EnsureConsumer provisions a durable consumer of stream whose config its
// owning package declares, idempotently (writing only what differs).
func (b *Bus) EnsureConsumer(ctx context.Context, stream string, want jetstream.ConsumerConfig) (jetstream.Consumer, error) {
	c, err := ensureConsumer(ctx, b.JS, stream, want)
	if err != nil {
		return nil, fmt.Errorf("bus: provision consumer %s: %w", want.Durable, err)
	}
	return c, nil
}

// PublishDedup publishes data on subj with Nats-Msg-Id = msgID and waits
// for the PubAck, once (no retry); dup reports that the stream dropped it
// as a duplicate within its duplicates window. The error is the
// publish's, unwrapped.
func (b *Bus) PublishDedup(ctx context.Context, subj, msgID string, data []byte) (seq uint64, dup bool, err error) {
	ack, err := b.JS.Publish(ctx, subj, data, jetstream.WithMsgID(msgID))
	if err != nil {
		return 0, false, err
	}
	return ack.Sequence, ack.Duplicate, nil
}
