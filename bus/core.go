package bus

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
)

// Core NATS over the bus's connection, for what is not a stream: wake-ups
// on what a stream stores, and request/reply between nodes.

// flushWait bounds the flush that registers a subscription on the server.
const flushWait = 10 * time.Second

// ErrNoResponders is Request's error when nothing serves the subject (on
// a node-addressed subject: the node is not up).
var ErrNoResponders = nats.ErrNoResponders

// Conn is the NATS client connection (nats.go's), named here so that bus
// alone imports the client library.
type Conn = nats.Conn

// OnPublish calls fn for every message published on subject from now on
// (core NATS fan-out: a stream's stored messages are published on their
// subjects, so this wakes a reader when one lands). fn runs on the
// subscription's goroutine, one call at a time, and must not block. The
// subscription is registered on the server before OnPublish returns. The
// returned function unsubscribes; calling it more than once is harmless.
func (b *Bus) OnPublish(subject string, fn func()) (func(), error) {
	return Subscribe(b.nc, subject, fn)
}

// Subscribe is OnPublish over any connection nc (a tool's or a test's
// own client beside the node).
func Subscribe(nc *Conn, subject string, fn func()) (func(), error) {
	sub, err := nc.Subscribe(subject, func(*nats.Msg) { fn() })
	if err != nil {
		return nil, fmt.Errorf("bus: subscribe %s: %w", subject, err)
	}
	if err := nc.FlushTimeout(flushWait); err != nil {
		_ = sub.Unsubscribe()
		return nil, fmt.Errorf("bus: subscribe %s: %w", subject, err)
	}
	return func() { _ = sub.Unsubscribe() }, nil
}

// Request sends data on subject and returns the first answer's data, or
// ctx's error; ErrNoResponders (wrapped) when nothing serves subject.
func (b *Bus) Request(ctx context.Context, subject string, data []byte) ([]byte, error) {
	m, err := b.nc.RequestWithContext(ctx, subject, data)
	if err != nil {
		return nil, fmt.Errorf("bus: request %s: %w", subject, err)
	}
	return m.Data, nil
}

// Serve answers the requests sent on subject: fn gets each request's data
// and a reply function to answer it with (once, from any goroutine). fn
// runs on the subscription's goroutine, one call at a time. The returned
// function stops serving.
func (b *Bus) Serve(subject string, fn func(data []byte, reply func([]byte))) (func() error, error) {
	sub, err := b.nc.Subscribe(subject, func(m *nats.Msg) {
		fn(m.Data, func(raw []byte) { _ = m.Respond(raw) })
	})
	if err != nil {
		return nil, fmt.Errorf("bus: serve %s: %w", subject, err)
	}
	return sub.Unsubscribe, nil
}

// RequestAll sends data on subject to every server of it and calls each
// with the data of each answer, one at a time, until want answers came or
// ctx ends; it returns how many came. An error means the request was not
// sent.
func (b *Bus) RequestAll(ctx context.Context, subject string, data []byte, want int, each func([]byte)) (int, error) {
	inbox := b.nc.NewRespInbox()
	replies := make(chan *nats.Msg, max(want, 1))
	sub, err := b.nc.ChanSubscribe(inbox, replies)
	if err != nil {
		return 0, fmt.Errorf("bus: request %s: %w", subject, err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	if err := b.nc.PublishRequest(subject, inbox, data); err != nil {
		return 0, fmt.Errorf("bus: request %s: %w", subject, err)
	}
	got := 0
	for got < want {
		select {
		case m := <-replies:
			got++
			if each != nil {
				each(m.Data)
			}
		case <-ctx.Done():
			return got, nil
		}
	}
	return got, nil
}

// Connected reports whether the bus's connection is up.
func (b *Bus) Connected() bool { return b.nc.IsConnected() }

// MaxPayload is the largest message the server accepts (0 when unknown).
func (b *Bus) MaxPayload() int64 {
	if b.nc == nil {
		return 0
	}
	return b.nc.MaxPayload()
}
