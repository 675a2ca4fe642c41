package bus

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// PublishOnce stores data under subj, a subject that names one message,
// with Nats-Msg-Id = msgID and an expected last subject sequence of 0, so
// a second copy is refused forever, not only inside the duplicates
// window. It returns the stream sequence of the stored message (the
// existing one, read from s, for a duplicate; 0 when that read fails) and
// whether it was a duplicate. The error is the publish's, unwrapped
// (StorageCoded gives a storage-full refusal its domain code).
func (b *Bus) PublishOnce(ctx context.Context, s jetstream.Stream, subj string, data []byte, msgID string) (seq uint64, dup bool, err error) {
	ack, err := b.js.Publish(ctx, subj, data, jetstream.WithMsgID(msgID), jetstream.WithExpectLastSequencePerSubject(0))
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

// PublishDedup publishes data on subj with Nats-Msg-Id = msgID and waits
// for the PubAck, once (no retry); dup reports that the stream dropped it
// as a duplicate within its duplicates window. The error is the
// publish's, unwrapped.
func (b *Bus) PublishDedup(ctx context.Context, subj string, data []byte, msgID string) (seq uint64, dup bool, err error) {
	ack, err := b.js.Publish(ctx, subj, data, jetstream.WithMsgID(msgID))
	if err != nil {
		return 0, false, err
	}
	return ack.Sequence, ack.Duplicate, nil
}

// Publish publishes data on subj with an optional message id and waits for
// the PubAck.
func (b *Bus) Publish(ctx context.Context, subj string, data []byte, msgID string) (uint64, error) {
	var opts []jetstream.PublishOpt
	if msgID != "" {
		opts = append(opts, jetstream.WithMsgID(msgID))
	}
	ack, err := b.js.Publish(ctx, subj, data, opts...)
	if err != nil {
		return 0, fmt.Errorf("bus: publish %s: %w", subj, StorageCoded(err))
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
		return 0, false, fmt.Errorf("bus: publish %s: %w", subj, StorageCoded(err))
	}
	return ack.Sequence, ack.Duplicate, nil
}
