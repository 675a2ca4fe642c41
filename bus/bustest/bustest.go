// Package bustest starts a real embedded nats-server with JetStream on a
// test's temporary folder and opens the provisioned bus on it. Nothing here
// mocks JetStream.
package bustest

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentproto/sentinel/bus"
	"github.com/agentproto/sentinel/bus/embedded"
)

// Env is a running embedded server with an open bus.
type Env struct {
	Server *embedded.Server
	Bus    *bus.Bus
	// NC is the bus's connection (this Env dialed it): for tests that
	// publish or subscribe beside the bus.
	NC *nats.Conn
	// JS is a JetStream context on NC, for tests that read or write a
	// stream directly.
	JS  jetstream.JetStream
	Dir string
	// joined: the server belongs to another Env (Join); Stop only closes
	// this Env's connection.
	joined bool
}

// Option adjusts the bus config.
type Option func(*bus.Config, *embedded.Config)

// WithPartitions sets the number of partitions.
func WithPartitions(n int) Option {
	return func(c *bus.Config, _ *embedded.Config) { c.Partitions = n }
}

// WithAckWait sets the consumers' ack wait.
func WithAckWait(d time.Duration) Option {
	return func(c *bus.Config, _ *embedded.Config) { c.AckWait = d }
}

// WithInboxDuplicates sets the inbox stream's Nats-Msg-Id window.
func WithInboxDuplicates(d time.Duration) Option {
	return func(c *bus.Config, _ *embedded.Config) { c.InboxDuplicates = d }
}

// WithLeaseTTL sets the leases bucket's key age (bus.lease_ttl).
func WithLeaseTTL(d time.Duration) Option {
	return func(c *bus.Config, _ *embedded.Config) { c.LeaseTTL = d }
}

// WithMemberTTL sets the nodes bucket's key age (bus.member_ttl).
func WithMemberTTL(d time.Duration) Option {
	return func(c *bus.Config, _ *embedded.Config) { c.MemberTTL = d }
}

// WithSyncAlways sets fsync on every write (off by default in tests).
func WithSyncAlways(on bool) Option {
	return func(_ *bus.Config, e *embedded.Config) { e.SyncAlways = on }
}

// WithDir reuses dir as the store folder (to restart on the same data).
func WithDir(dir string) Option {
	return func(_ *bus.Config, e *embedded.Config) { e.StoreDir = dir }
}

// Start starts an embedded JetStream server on t.TempDir() (fsync off, for
// speed; the durability tests run the binary with its defaults), opens the
// bus and registers cleanup.
func Start(t testing.TB, opts ...Option) *Env {
	t.Helper()
	bc := bus.DefaultConfig()
	bc.Partitions = 4
	ec := embedded.DefaultConfig()
	ec.SyncAlways = false
	ec.StoreDir = t.TempDir()
	for _, o := range opts {
		o(&bc, &ec)
	}
	srv, err := embedded.Start(ec, nil)
	if err != nil {
		t.Fatalf("bustest: start server: %v", err)
	}
	nc, err := srv.Connect("bustest")
	if err != nil {
		srv.Shutdown()
		t.Fatalf("bustest: connect: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := bus.Open(ctx, nc, bc)
	if err != nil {
		nc.Close()
		srv.Shutdown()
		t.Fatalf("bustest: open bus: %v", err)
	}
	env := &Env{Server: srv, Bus: b, NC: nc, JS: mustJetStream(t, nc), Dir: ec.StoreDir}
	t.Cleanup(env.Stop)
	return env
}

// Join opens another bus on e's server over a connection of its own (a
// second node of one service sharing one JetStream, as nodes in external
// mode do), with e's bus config adjusted by opts, and registers cleanup:
// its Stop closes only its own connection.
func Join(t testing.TB, e *Env, opts ...Option) *Env {
	t.Helper()
	bc := e.Bus.Cfg
	var ec embedded.Config
	for _, o := range opts {
		o(&bc, &ec)
	}
	nc, err := e.Server.Connect("bustest-join")
	if err != nil {
		t.Fatalf("bustest: connect: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := bus.Open(ctx, nc, bc)
	if err != nil {
		nc.Close()
		t.Fatalf("bustest: open bus: %v", err)
	}
	env := &Env{Server: e.Server, Bus: b, NC: nc, JS: mustJetStream(t, nc), Dir: e.Dir, joined: true}
	t.Cleanup(env.Stop)
	return env
}

func mustJetStream(t testing.TB, nc *nats.Conn) jetstream.JetStream {
	t.Helper()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatalf("bustest: jetstream: %v", err)
	}
	return js
}

// KeyValue provisions a bucket from the config its owning package
// declares (as the composition root does at start) and returns it; a
// failure fails the test.
func (e *Env) KeyValue(t testing.TB, cfg jetstream.KeyValueConfig) jetstream.KeyValue {
	t.Helper()
	kv, err := e.Bus.EnsureKeyValue(context.Background(), cfg)
	if err != nil {
		t.Fatalf("bustest: %v", err)
	}
	return kv
}

// Stream provisions a stream from the spec its owning package declares
// and returns it; a failure fails the test.
func (e *Env) Stream(t testing.TB, spec bus.StreamSpec) jetstream.Stream {
	t.Helper()
	s, err := e.Bus.EnsureStream(context.Background(), spec)
	if err != nil {
		t.Fatalf("bustest: %v", err)
	}
	return s
}

// Stop closes the bus and shuts the server down (a joined Env only closes
// its connection); it is idempotent.
func (e *Env) Stop() {
	if e.NC != nil {
		e.NC.Close()
		e.NC, e.Bus = nil, nil
	}
	if e.joined {
		e.Server = nil
		return
	}
	if e.Server != nil {
		e.Server.Shutdown()
		e.Server = nil
	}
}

// Eventually polls cond every 5ms until it is true or the deadline passes.
func Eventually(t testing.TB, within time.Duration, cond func() bool, msg string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		if cond() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %s: "+msg, append([]any{within}, args...)...)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
