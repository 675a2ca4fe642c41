package bus

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentproto/sentinel"
)

// publishAttempt bounds one publish attempt; PublishRetry (bus config)
// bounds them all.
const publishAttempt = 2 * time.Second

// publishRetrying publishes with msgID, retrying with the same id while
// the stream has no leader (a raft election after a node died takes
// seconds): the id makes a retry of a publish that did land a duplicate,
// never a second copy. It gives up when ctx ends or after
// Cfg.PublishRetry, returning the last error.
func (b *Bus) publishRetrying(ctx context.Context, subj string, data []byte, msgID string) (*jetstream.PubAck, error) {
	budget := b.Cfg.PublishRetry
	if budget <= 0 {
		budget = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	wait := 100 * time.Millisecond
	for {
		actx, acancel := context.WithTimeout(ctx, publishAttempt)
		ack, err := b.js.Publish(actx, subj, data, jetstream.WithMsgID(msgID))
		acancel()
		if err == nil || !transient(err) {
			return ack, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(wait):
		}
		wait = min(2*wait, time.Second)
	}
}

// transient reports errors a leader election or a reconnect explains.
func transient(err error) bool {
	var apiErr *jetstream.APIError
	switch {
	case errors.Is(err, nats.ErrNoResponders), errors.Is(err, jetstream.ErrNoStreamResponse),
		errors.Is(err, nats.ErrTimeout), errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, nats.ErrConnectionReconnecting), errors.Is(err, nats.ErrDisconnected):
		return true
	case StorageFull(err):
		// Answered 503 too, but no election ends it: fail at once.
		return false
	case errors.As(err, &apiErr):
		return apiErr.Code == 503 || apiErr.ErrorCode == jetstream.JSErrCodeJetStreamNotEnabled
	}
	return false
}

// Retryable gives an error that a leader election or a reconnect explains
// (a read that timed out during a failover) the domain code
// sentinel.CodeUnavailable: 503 on every surface, safe to repeat here or
// on another node. Other errors pass through unchanged.
func Retryable(err error) error {
	if err == nil || !transient(err) {
		return err
	}
	return sentinel.Wrap(sentinel.CodeUnavailable, err, "the bus did not answer in time (a leader election or a reconnect): retry")
}
