package bus

import (
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// ErrPublishStalled is AsyncPublisher.Publish's error (wrapped) when its
// MaxPending publishes stayed unacknowledged for the whole stall wait:
// nothing was sent.
var ErrPublishStalled = jetstream.ErrTooManyStalledMsgs

// AsyncConfig configures an AsyncPublisher.
type AsyncConfig struct {
	// MaxPending bounds the publishes awaiting their ack (nats.go's
	// default when 0).
	MaxPending int
	// AckTimeout bounds the wait for one publish's ack; past it the
	// publish fails (OnError). 0: nats.go's default.
	AckTimeout time.Duration
	// StallWait is how long Publish waits for room while MaxPending acks
	// are outstanding before it gives up with ErrPublishStalled (nats.go's
	// default when 0).
	StallWait time.Duration
	// OnError, when set, is called with the error of every publish that
	// failed after Publish returned (a negative ack, or none within
	// AckTimeout). It runs on the client's goroutine and must not block.
	OnError func(err error)
}

// AsyncPublisher publishes without waiting for each ack, through a
// JetStream context of its own on the bus's connection, so its bound on
// unacknowledged publishes is its own and not shared with the bus's other
// publishes. NewAsyncPublisher builds it; its methods are safe for
// concurrent use.
type AsyncPublisher struct {
	js        jetstream.JetStream
	stallWait time.Duration
}

// NewAsyncPublisher returns an asynchronous publisher on the bus's
// connection.
func (b *Bus) NewAsyncPublisher(cfg AsyncConfig) (*AsyncPublisher, error) {
	var opts []jetstream.JetStreamOpt
	if cfg.MaxPending > 0 {
		opts = append(opts, jetstream.WithPublishAsyncMaxPending(cfg.MaxPending))
	}
	if cfg.AckTimeout > 0 {
		opts = append(opts, jetstream.WithPublishAsyncTimeout(cfg.AckTimeout))
	}
	if cfg.OnError != nil {
		onErr := cfg.OnError
		opts = append(opts, jetstream.WithPublishAsyncErrHandler(func(_ jetstream.JetStream, _ *nats.Msg, err error) { onErr(err) }))
	}
	js, err := jetstream.New(b.nc, opts...)
	if err != nil {
		return nil, fmt.Errorf("bus: async publisher: %w", err)
	}
	return &AsyncPublisher{js: js, stallWait: cfg.StallWait}, nil
}

// Publish sends data on subj, with Nats-Msg-Id = msgID when msgID is not
// empty, and returns without waiting for the ack (a failure after it
// returns goes to OnError). While MaxPending acks are outstanding it waits
// up to the stall wait for room, then fails with ErrPublishStalled.
func (p *AsyncPublisher) Publish(subj string, data []byte, msgID string) error {
	var opts []jetstream.PublishOpt
	if msgID != "" {
		opts = append(opts, jetstream.WithMsgID(msgID))
	}
	if p.stallWait > 0 {
		opts = append(opts, jetstream.WithStallWait(p.stallWait))
	}
	if _, err := p.js.PublishAsync(subj, data, opts...); err != nil {
		return fmt.Errorf("bus: publish %s: %w", subj, err)
	}
	return nil
}

// Pending is how many publishes await their ack.
func (p *AsyncPublisher) Pending() int { return p.js.PublishAsyncPending() }

// Complete is closed once no publish awaits its ack (at the time of the
// call: a later Publish needs a new Complete).
func (p *AsyncPublisher) Complete() <-chan struct{} { return p.js.PublishAsyncComplete() }
