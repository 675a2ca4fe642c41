package follow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentproto/sentinel/runtime/metrics"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/runtime/inbox"
	"github.com/agentproto/sentinel/runtime/park"
	"github.com/agentproto/sentinel/runtime/pause"
	"github.com/agentproto/sentinel/runtime/sessions"
)

// ConsumerName is the durable lifecycle consumer of the follow engine.
const ConsumerName = "follows"

// PointEvaluate is reached (key: the event's session id) when a lifecycle
// event is taken from the stream, before it is evaluated: a Fail there is a
// store that cannot be read (an election).
const PointEvaluate pause.Point = "follow.evaluate"

// Engine evaluates lifecycle events against follows at event time,
// batches entries per follower and delivers one digest per batch.
type Engine struct {
	store    *Store
	registry *sessions.Registry
	resolver *sessions.Resolver
	appendFn sessions.AppendFunc
	parked   *park.Store
	log      *slog.Logger
	// metrics, when set, counts digests delivered and parked.
	metrics *metrics.Metrics

	batcher *Batcher
	clock   Clock

	// owns, when set (a cluster), says whether this node evaluates follows
	// now: one node of a cluster consumes the lifecycle stream at a time,
	// so one follower's entries batch on one node into one digest.
	owns func() bool
	// ackWait is the lifecycle consumer's ack wait (default 30s): a message
	// of a lost node is redelivered this long after its last in-progress
	// mark, which the node sends every ackWait/3 while its batch waits.
	ackWait time.Duration
	// retryBase and retryMax bound the backoff of a lifecycle event whose
	// evaluation or digest failed (defaults 1s and 1m): retryBase doubling
	// per delivery, capped. It is retried until it succeeds: the consumer
	// has no MaxDeliver, so an election longer than a few retries (they
	// take 4-9 s) loses nothing (issue 21, item 4).
	retryBase, retryMax time.Duration
	// pause holds the engine's named pause points (tests; nil in
	// production): PointEvaluate.
	pause *pause.Points
	// consumers, when set, provisions the lifecycle consumer (the bus:
	// bounded and retried through the elections of a cluster's start);
	// without it Start creates it on the stream itself.
	consumers Consumers

	held     *held
	stopHeld context.CancelFunc
	heldDone chan struct{}

	mu      sync.Mutex
	cc      jetstream.ConsumeContext
	cons    jetstream.Consumer
	stopSup context.CancelFunc
	supDone chan struct{}
	stopped atomic.Bool
}

// Deps are what an engine works with; every one is required.
type Deps struct {
	// Store keeps the follows.
	Store *Store
	// Registry knows the sessions (followers must be registered).
	Registry *sessions.Registry
	// Resolver finds where a follower's digest goes (dead targets).
	Resolver *sessions.Resolver
	// Append stores a digest in the follower's inbox.
	Append sessions.AppendFunc
	// Park keeps the digests that cannot be delivered.
	Park *park.Store
}

// Option sets one of an engine's optional settings.
type Option func(*Engine)

// WithClock runs the engine's batches on c (RealClock by default).
func WithClock(c Clock) Option { return func(e *Engine) { e.clock = c } }

// WithLogger logs through l (discarded by default).
func WithLogger(l *slog.Logger) Option { return func(e *Engine) { e.log = l } }

// WithMetrics counts the digests delivered and parked on m.
func WithMetrics(m *metrics.Metrics) Option { return func(e *Engine) { e.metrics = m } }

// WithOwnership has the engine consume the lifecycle stream only while
// owns says this node holds the follow job (a cluster); without it the
// engine consumes from Start on.
func WithOwnership(owns func() bool) Option { return func(e *Engine) { e.owns = owns } }

// WithAckWait sets the lifecycle consumer's ack wait (default 30s).
func WithAckWait(d time.Duration) Option { return func(e *Engine) { e.ackWait = d } }

// WithRetry bounds the backoff of a lifecycle event whose evaluation or
// digest failed (defaults 1s doubling to 1m).
func WithRetry(base, most time.Duration) Option {
	return func(e *Engine) { e.retryBase, e.retryMax = base, most }
}

// WithPause installs the engine's named pause points (tests):
// PointEvaluate.
func WithPause(p *pause.Points) Option { return func(e *Engine) { e.pause = p } }

// Consumers provisions a durable consumer on a stream, idempotently
// (*bus.Bus is one: its create is bounded and retried while the stream's
// raft group elects, as on every start of a cluster's nodes at once).
type Consumers interface {
	EnsureConsumer(ctx context.Context, stream string, want jetstream.ConsumerConfig) (jetstream.Consumer, error)
}

// WithConsumers has Start provision the lifecycle consumer through c. A
// plain create answered nothing while a cluster restarted all its nodes
// at once, and the node exited with "follows: lifecycle consumer:
// context deadline exceeded".
func WithConsumers(c Consumers) Option { return func(e *Engine) { e.consumers = c } }

// ErrMissingDep is NewEngine's refusal of Deps with a dependency unset.
var ErrMissingDep = errors.New("follows: engine dependency missing")

// NewEngine returns an engine over d with opts applied; ErrMissingDep
// (wrapped, naming it) when a dependency is unset.
func NewEngine(d Deps, opts ...Option) (*Engine, error) {
	switch {
	case d.Store == nil:
		return nil, fmt.Errorf("%w: Store", ErrMissingDep)
	case d.Registry == nil:
		return nil, fmt.Errorf("%w: Registry", ErrMissingDep)
	case d.Resolver == nil:
		return nil, fmt.Errorf("%w: Resolver", ErrMissingDep)
	case d.Append == nil:
		return nil, fmt.Errorf("%w: Append", ErrMissingDep)
	case d.Park == nil:
		return nil, fmt.Errorf("%w: Park", ErrMissingDep)
	}
	e := &Engine{store: d.Store, registry: d.Registry, resolver: d.Resolver, appendFn: d.Append, parked: d.Park, held: newHeld()}
	for _, o := range opts {
		o(e)
	}
	if e.clock == nil {
		e.clock = RealClock{}
	}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	if e.ackWait <= 0 {
		e.ackWait = 30 * time.Second
	}
	if e.retryBase <= 0 {
		e.retryBase = time.Second
	}
	if e.retryMax < e.retryBase {
		e.retryMax = max(time.Minute, e.retryBase)
	}
	e.batcher = NewBatcher(e.clock, e.flushAsync)
	return e, nil
}

// Store is the engine's follow store.
func (e *Engine) Store() *Store { return e.store }

// AckWait is the lifecycle consumer's ack wait.
func (e *Engine) AckWait() time.Duration { return e.ackWait }

// Upsert validates and stores a follow (created = false for an update by
// key). The follower must be known to the registry (session_not_found).
func (e *Engine) Upsert(ctx context.Context, req sentinel.FollowRequest, caller string) (sentinel.Follow, bool, error) {
	f, err := normalize(req, caller)
	if err != nil {
		return sentinel.Follow{}, false, err
	}
	s, err := e.registry.Lookup(ctx, f.Follower)
	if err != nil {
		return sentinel.Follow{}, false, err
	}
	if s == nil || s.Forgotten {
		return sentinel.Follow{}, false, sentinel.Errorf(sentinel.CodeSessionNotFound, "follower session %q is not known to the registry", f.Follower)
	}
	return e.store.Upsert(ctx, f, sentinel.FormatTime(e.clock.Now()))
}

// Handle evaluates one lifecycle event: for each follower, the first
// matching follow claims it and one entry joins that follower's batch.
func (e *Engine) Handle(ctx context.Context, ev sessions.LifecycleEvent) error {
	return e.HandleThen(ctx, ev, nil)
}

// HandleThen is Handle, with done (when set) told once every batch the
// event joined was delivered or parked (ok), or one of them could not be
// (not ok); at once, ok, when no follow claims it. It is not told when
// HandleThen returns an error. The consumer acks the lifecycle message
// only then, so a node lost with a batch pending loses nothing: the
// message is redelivered to the node that takes the follow job over.
func (e *Engine) HandleThen(ctx context.Context, ev sessions.LifecycleEvent, done func(ok bool)) error {
	join := newCountdown(done)
	follows, err := e.store.List(ctx, "")
	if err != nil {
		return err
	}
	if len(follows) == 0 {
		join.release(true)
		return nil
	}
	cache := map[string]*sessions.Session{}
	var lookupErr error
	lookup := func(id string) *sessions.Session {
		if s, ok := cache[id]; ok {
			return s
		}
		s, err := e.registry.Lookup(ctx, id)
		if err != nil {
			lookupErr = err
		}
		if s != nil && s.Forgotten {
			s = nil
		}
		cache[id] = s
		return s
	}
	claimed := map[string]bool{}
	for i := range follows {
		f := &follows[i]
		if claimed[f.Follower] {
			continue
		}
		kind, ok := Wants(f, &ev)
		if !ok || !Covers(f, &ev, lookup) {
			continue
		}
		claimed[f.Follower] = true
		desc := lookup(ev.SessionID)
		entry := Entry{FollowID: f.ID, SessionID: ev.SessionID, Label: ev.Label, Kind: kind, Key: ev.Key, Excerpt: excerptSource(kind, &ev, desc)}
		if desc != nil {
			if desc.Label != "" {
				entry.Label = desc.Label
			}
			entry.Cwd = desc.Cwd
		}
		join.add()
		e.batcher.AddThen(f.Follower, entry, f.BatchMs, join.release)
	}
	if lookupErr != nil {
		return lookupErr // not told: the entries taken are delivered, the event retried
	}
	join.release(true)
	return nil
}

// Flush delivers follower's pending batch now, on the calling goroutine.
func (e *Engine) Flush(follower string) { e.batcher.Flush(follower) }

// flushAsync is the batcher's flush, run on the clock's timer goroutine
// (the batcher's Close waits for it).
func (e *Engine) flushAsync(follower string, entries []Entry) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err := e.deliver(ctx, follower, entries)
	if err != nil {
		e.log.Error("follow digest not delivered", "follower", follower, "err", err)
	}
	return err
}

// deliver sends one digest: to the current follower of the claiming follow
// (a re-point mid-batch wins), resolved like a sentinel target (resumed
// under a new id re-points every follow), else parked. Never dropped.
func (e *Engine) deliver(ctx context.Context, follower string, entries []Entry) error {
	text := Digest(entries)
	followID := entries[0].FollowID
	target := follower
	if f, _, err := e.store.Get(ctx, followID); err == nil && f.Follower != follower {
		target = f.Follower
	}
	res, err := e.resolver.Resolve(ctx, target, false)
	switch {
	case errors.Is(err, sessions.ErrHomeUnreachable):
		return e.park(ctx, followID, target, text, "follower "+target+" needs resuming, and its resume hook runs on its home node, which is down: "+err.Error())
	case err != nil:
		return e.park(ctx, followID, target, text, "reading the session registry failed: "+err.Error())
	}
	if res.Action != sessions.Deliver {
		return e.park(ctx, followID, target, text, "follower "+target+" cannot receive: "+res.Reason)
	}
	if res.To != target {
		n, err := e.store.SetFollower(ctx, target, res.To)
		if err != nil {
			e.log.Warn("re-pointing follows failed", "from", target, "to", res.To, "err", err)
		}
		e.log.Info("follows re-pointed to the resumed follower", "from", target, "to", res.To, "follows", n)
	}
	now := e.clock.Now()
	msg := sentinel.Message{
		ID: inbox.DeterministicID("session-follow", res.To, followID, strconv.FormatInt(now.UnixNano(), 10), text),
		Ts: sentinel.FormatTime(now), To: res.To, From: sentinel.MessageFrom{Relation: inbox.RelationSystem},
		Kind: inbox.KindNotice, Urgency: sentinel.UrgencyNextTurn, Text: text,
		Source: "session-follow", Origin: "follow:" + res.To,
	}
	msg.CorrelationID = msg.ID
	if _, _, err := e.appendFn(ctx, msg); err != nil {
		return e.park(ctx, followID, res.To, text, "sending the digest failed: "+err.Error())
	}
	e.metrics.Inc(func(m *metrics.Metrics) prometheus.Counter { return m.FollowDigests })
	return nil
}

func (e *Engine) park(ctx context.Context, followID, follower, text, reason string) error {
	e.log.Info("follow digest parked", "follower", follower, "reason", reason)
	if err := e.parked.Park(ctx, followID, sentinel.Parked{FollowID: followID, Follower: follower, Text: text, Reason: reason}, ""); err != nil {
		return fmt.Errorf("park digest for %s: %w", follower, err)
	}
	e.metrics.IncVec(func(m *metrics.Metrics) *prometheus.CounterVec { return m.Parked }, "follow_digest")
	return nil
}

// Start consumes lifecycle (the lifecycle stream, runtime/sessions) with a
// durable consumer from now on:
// at once on a single node; in a cluster (Owns set) only while this node
// owns the follow job, checked every second.
func (e *Engine) Start(ctx context.Context, lifecycle jetstream.Stream) error {
	cfg := jetstream.ConsumerConfig{
		Durable:       ConsumerName,
		Description:   "session follows",
		AckPolicy:     jetstream.AckExplicitPolicy,
		DeliverPolicy: jetstream.DeliverNewPolicy,
		AckWait:       e.ackWait,
		MaxDeliver:    -1,
	}
	var cons jetstream.Consumer
	var err error
	if e.consumers != nil {
		cons, err = e.consumers.EnsureConsumer(ctx, lifecycle.CachedInfo().Config.Name, cfg)
	} else {
		cons, err = lifecycle.CreateOrUpdateConsumer(ctx, cfg)
	}
	if err != nil {
		return fmt.Errorf("follows: lifecycle consumer: %w", err)
	}
	e.cons = cons
	hctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	e.stopHeld, e.heldDone = cancel, make(chan struct{})
	go func() { defer close(e.heldDone); e.held.run(hctx, e.ackWait/3) }()
	if e.owns == nil {
		return e.consume()
	}
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	e.stopSup, e.supDone = cancel, make(chan struct{})
	go e.supervise(sctx)
	return nil
}

// supervise starts consuming when this node gains the follow job and stops
// when it loses it (pending batches still flush here).
func (e *Engine) supervise(ctx context.Context) {
	defer close(e.supDone)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		owns := e.owns()
		e.mu.Lock()
		running := e.cc != nil
		e.mu.Unlock()
		switch {
		case owns && !running:
			if err := e.consume(); err != nil {
				e.log.Warn("follows: start consuming", "err", err)
			}
		case !owns && running:
			e.stopConsuming()
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (e *Engine) consume() error {
	cc, err := e.cons.Consume(func(m jetstream.Msg) {
		var ev sessions.LifecycleEvent
		if json.Unmarshal(m.Data(), &ev) != nil {
			_ = m.Term()
			return
		}
		hctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := e.pause.At(hctx, PointEvaluate, ev.SessionID); err != nil {
			e.log.Warn("follow evaluation failed", "session", ev.SessionID, "kind", ev.Kind, "err", err)
			_ = m.NakWithDelay(e.backoff(m))
			return
		}
		// Acked once the digests it joined are delivered (or parked), not
		// before: a node lost meanwhile loses nothing (held.go).
		e.held.hold(m)
		err := e.HandleThen(hctx, ev, func(ok bool) {
			e.held.drop(m)
			if ok {
				_ = m.Ack()
			} else {
				_ = m.NakWithDelay(e.backoff(m))
			}
		})
		if err != nil {
			e.held.drop(m)
			if !errors.Is(err, context.Canceled) {
				e.log.Warn("follow evaluation failed", "session", ev.SessionID, "kind", ev.Kind, "err", err)
			}
			_ = m.NakWithDelay(e.backoff(m))
		}
	})
	if err != nil {
		return fmt.Errorf("follows: consume lifecycle: %w", err)
	}
	e.mu.Lock()
	e.cc = cc
	e.mu.Unlock()
	return nil
}

// backoff is the delay before a failed lifecycle event comes again:
// RetryBase doubling with each delivery, capped at RetryMax.
func (e *Engine) backoff(m jetstream.Msg) time.Duration {
	n := uint64(1)
	if md, err := m.Metadata(); err == nil && md.NumDelivered > 0 {
		n = md.NumDelivered
	}
	d := e.retryBase
	for i := uint64(1); i < n && d < e.retryMax; i++ {
		d *= 2
	}
	return min(d, e.retryMax)
}

func (e *Engine) stopConsuming() {
	e.mu.Lock()
	cc := e.cc
	e.cc = nil
	e.mu.Unlock()
	if cc != nil {
		cc.Drain()
		<-cc.Closed()
	}
}

// Stop stops consuming, flushes every pending batch (never dropped) and
// waits for deliveries. Idempotent.
func (e *Engine) Stop() {
	if e == nil || !e.stopped.CompareAndSwap(false, true) {
		return
	}
	if e.stopSup != nil {
		e.stopSup()
		<-e.supDone
	}
	e.stopConsuming()
	e.batcher.Close()
	if e.stopHeld != nil {
		e.stopHeld()
		<-e.heldDone
	}
}

// Pending returns the followers with a batch waiting to be sent.
func (e *Engine) Pending() []string { return e.batcher.Pending() }
