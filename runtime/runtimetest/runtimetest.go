// Package runtimetest wires the runtime (stores, pipeline, workers, poll
// loop, service) over a real embedded JetStream and the fake provider, for
// the runtime's own tests.
package runtimetest

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus"
	"github.com/agentproto/sentinel/bus/bustest"
	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/fake"
	"github.com/agentproto/sentinel/runtime/deliver"
	"github.com/agentproto/sentinel/runtime/inbox"
	"github.com/agentproto/sentinel/runtime/journal"
	"github.com/agentproto/sentinel/runtime/park"
	"github.com/agentproto/sentinel/runtime/pause"
	"github.com/agentproto/sentinel/runtime/poll"
	"github.com/agentproto/sentinel/runtime/sentinels"
)

// Clock is a settable clock.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a clock at t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now returns the current time.
func (c *Clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

// Advance moves the clock forward.
func (c *Clock) Advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// Set sets the clock.
func (c *Clock) Set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

// Env is a wired runtime.
type Env struct {
	T        testing.TB
	Bus      *bustest.Env
	Fake     *fake.Provider
	Registry *providers.Registry
	// Buckets are the sentinels' buckets (records, seen, creds, ...), for
	// tests that assert on storage.
	Buckets   *sentinels.Buckets
	Store     *sentinels.Store
	Seen      *sentinels.Seen
	Inbox     *inbox.Inbox
	Park      *park.Store
	Journal   *journal.Journal
	Pipeline  *deliver.Pipeline
	Workers   *deliver.Workers
	Loop      *poll.Loop
	Publisher *poll.Publisher
	Service   *sentinels.Service
	Expirer   *sentinels.Expirer
	// Creds are the providers' stored credentials (the service's).
	Creds *sentinels.CredStore
	// Batches holds the events of sentinels with a batchMs (digests); no
	// flusher runs: a test calls Batches.FlushDue after moving Clock.
	Batches *deliver.Batches
	Clock   *Clock
	Log     *slog.Logger
	// Pause holds this node's named pause points (the pipeline's, the
	// workers', the poll loop's, the store's): a script holds one node at a
	// point while another runs.
	Pause *pause.Points
	// Node names this node (its journal entries).
	Node string
	// pollOpts are Options.Poll, which NewLoop applies first.
	pollOpts []poll.Option
	// index is the watch index NewService hands every service.
	index *sentinels.WatchIndex
	// serviceOpts are Options.Service, which NewService applies first.
	serviceOpts []sentinels.Option
	// leaderReads says the store reads records through the bucket's
	// leader (Options.LeaderReads, Join, StartCluster); leaderRead is that
	// read, which SilentLeader replaces.
	leaderReads bool
	leaderRead  atomic.Pointer[leaderGet]
}

// leaderGet is a store's read through the records bucket's leader.
type leaderGet = func(ctx context.Context, id string) ([]byte, uint64, error)

// Options adjust the env.
type Options struct {
	// Router replaces the direct inbox router.
	Router deliver.Router
	// NoWorkers leaves the delivery workers stopped.
	NoWorkers bool
	// Extra providers registered after the fake.
	Extra []providers.Provider
	// ExtraFor, when set, builds more providers for each node over its own
	// bus (a provider that keeps state in the node's buckets), registered
	// after Extra.
	ExtraFor func(be *bustest.Env) []providers.Provider
	// PipelineOpts are applied to the pipeline after the env's own (a
	// shorter record read timeout).
	PipelineOpts []deliver.PipelineOption
	// Delivery replaces the workers' config (short retries, a 10 s handle
	// deadline); its unset bounds take deliver's defaults.
	Delivery *deliver.WorkersConfig
	// Partitions (default 4).
	Partitions int
	// BusOpts passes through to bustest.
	BusOpts []bustest.Option
	// Node names the node (its journal entries; default "test", "peer"
	// for Join, n1.. in a cluster).
	Node string
	// Poll adjusts the env's poll loop (its clock, the channel it waits
	// on, ...), after the env's own options.
	Poll []poll.Option
	// Service adjusts the env's sentinel service (a selection order, a
	// public URL, a session checker), after the env's own options.
	Service []sentinels.Option
	// Tombstones adjust the env's pending provider cancels (how many run
	// at once, each one's timeout), after the env's own options.
	Tombstones []sentinels.TombstonesOption
	// Store adjusts the env's record store (how often its mirror is
	// looked at), after the env's own options.
	Store []sentinels.StoreOption
	// LeaderReads makes the store read records through the bucket's
	// leader, as runtime/app's node with peers does (sentinels.
	// WithLeaderGet). Join and StartCluster wire their nodes so; a node
	// another one Joins must be started with it.
	LeaderReads bool
}

// Start wires and starts the runtime.
func Start(t testing.TB, o Options) *Env {
	t.Helper()
	if o.Partitions == 0 {
		o.Partitions = 4
	}
	opts := append([]bustest.Option{bustest.WithPartitions(o.Partitions), bustest.WithAckWait(5 * time.Second)}, o.BusOpts...)
	be := bustest.Start(t, opts...)
	clock := NewClock(time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC))
	node := o.Node
	if node == "" {
		node = "test"
	}
	return wire(t, be, o, clock, node, o.LeaderReads)
}

// Join wires a second node's runtime on e's server (its own connection,
// bus, record mirror, pipeline, workers, poll loop and pause points; the
// same JetStream and the same clock): two nodes of one service, for
// scripts where one node pauses while the other runs (issue 21). o.BusOpts
// adjust e's bus config; o.Partitions is ignored (the bus's count holds).
// Nodes of one service read the records their decisions rest on through
// the bucket's leader (runtime/app does whenever a node has peers), not
// from a mirror that may trail the other node's writes: e must have been
// started with Options.LeaderReads, and the joined node reads so too.
func Join(t testing.TB, e *Env, o Options) *Env {
	t.Helper()
	if !e.leaderReads {
		t.Fatal("runtimetest: Join needs the env it joins started with Options.LeaderReads")
	}
	be := bustest.Join(t, e.Bus, o.BusOpts...)
	node := o.Node
	if node == "" {
		node = "peer"
	}
	return wire(t, be, o, e.Clock, node, true)
}

// StartCluster starts n clustered embedded servers (bustest.StartCluster)
// and wires one runtime on each, with the leader reads of a cluster node
// (sentinels.WithLeaderGet, as runtime/app sets it), all on one clock.
func StartCluster(t testing.TB, n int, o Options) []*Env {
	t.Helper()
	if o.Partitions == 0 {
		o.Partitions = 4
	}
	opts := append([]bustest.Option{bustest.WithPartitions(o.Partitions), bustest.WithAckWait(5 * time.Second)}, o.BusOpts...)
	bes := bustest.StartCluster(t, n, opts...)
	clock := NewClock(time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC))
	envs := make([]*Env, n)
	for i, be := range bes {
		envs[i] = wire(t, be, o, clock, "n"+strconv.Itoa(i+1), true)
	}
	return envs
}

// wire builds a runtime on be.
func wire(t testing.TB, be *bustest.Env, o Options, clock *Clock, node string, leaderReads bool) *Env {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	fk := fake.New(fake.Config{})
	provs := append([]providers.Provider{fk}, o.Extra...)
	if o.ExtraFor != nil {
		provs = append(provs, o.ExtraFor(be)...)
	}
	reg, err := providers.NewRegistry(provs...)
	if err != nil {
		t.Fatal(err)
	}
	e := &Env{T: t, Bus: be, Fake: fk, Registry: reg, Clock: clock, Log: log, Pause: pause.New(), Node: node, leaderReads: leaderReads}
	b := be.Bus
	ctx := context.Background()
	if e.Buckets, err = sentinels.OpenBuckets(ctx, b); err != nil {
		t.Fatal(err)
	}
	sopts := []sentinels.StoreOption{sentinels.WithStorePause(e.Pause)}
	if leaderReads {
		live := leaderGet(sentinels.BusLeaderGet(b))
		e.leaderRead.Store(&live)
		sopts = append(sopts, sentinels.WithLeaderGet(func(ctx context.Context, id string) ([]byte, uint64, error) {
			return (*e.leaderRead.Load())(ctx, id)
		}))
	}
	e.Store = sentinels.NewStore(e.Buckets.Records, append(sopts, o.Store...)...)
	if err := e.Store.StartCache(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Store.StopCache)
	e.Seen = sentinels.NewSeen(e.Buckets.Seen, sentinels.WithSeenClock(clock.Now))
	if e.Inbox, err = inbox.Open(ctx, b, b.Cfg); err != nil {
		t.Fatal(err)
	}
	if e.Park, err = park.Open(ctx, b, b.Cfg, park.WithClock(clock.Now)); err != nil {
		t.Fatal(err)
	}
	e.Expirer = sentinels.NewExpirer(e.Store, reg, sentinels.WithExpirerLogger(log), sentinels.WithExpirerClock(clock.Now),
		sentinels.WithTombstones(sentinels.NewTombstones(e.Buckets.Tombstones,
			append([]sentinels.TombstonesOption{sentinels.WithTombstonesClock(clock.Now), sentinels.WithTombstonesLogger(log)}, o.Tombstones...)...)))
	router := o.Router
	if router == nil {
		router = deliver.NewDirectRouter(e.Inbox, deliver.WithDirectRouterClock(clock.Now))
	}
	j, err := journal.Open(context.Background(), b, b.Cfg.Replicas, journal.DefaultConfig(), journal.WriterConfig{Node: node}, journal.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	e.Journal = j
	t.Cleanup(func() { _ = j.Stop(context.Background()) })
	e.Batches, err = deliver.OpenBatches(context.Background(), b, e.Inbox.Append, deliver.WithBatchesClock(clock.Now), deliver.WithBatchesLogger(log), deliver.WithBatchesPause(e.Pause))
	if err != nil {
		t.Fatal(err)
	}
	popts := append([]deliver.PipelineOption{deliver.WithLogger(log), deliver.WithClock(clock.Now), deliver.WithDecisions(j), deliver.WithPause(e.Pause), deliver.WithBatches(e.Batches)}, o.PipelineOpts...)
	e.Pipeline, err = deliver.NewPipeline(deliver.PipelineDeps{Store: e.Store, Seen: e.Seen, Registry: reg, Router: router, Park: e.Park, Expirer: e.Expirer}, popts...)
	if err != nil {
		t.Fatal(err)
	}
	e.Publisher = poll.NewPublisher(b, nil)
	e.pollOpts = o.Poll
	e.Loop = e.NewLoop()
	index, err := sentinels.OpenWatchIndex(context.Background(), b)
	if err != nil {
		t.Fatal(err)
	}
	e.index = index
	e.Creds = sentinels.NewCredStore(e.Buckets.Creds)
	e.serviceOpts = o.Service
	e.Service = e.NewService()
	wcfg := deliver.WorkersConfig{RetryBase: 20 * time.Millisecond, RetryMax: 100 * time.Millisecond, HandleTimeout: 10 * time.Second}
	if o.Delivery != nil {
		wcfg = *o.Delivery
	}
	e.Workers, err = deliver.NewWorkers(b, e.Pipeline, deliver.WithConfig(wcfg))
	if err != nil {
		t.Fatal(err)
	}
	if !o.NoWorkers {
		e.StartWorkers()
	}
	return e
}

// NewLoop builds a poll loop over the env's store, registry, publisher,
// park store and expirer, with its logger, clock and pause points, then
// Options.Poll, then opts: a second loop on the same node (a successor, a
// loop that owns some keys). The env's Service keeps polling through
// e.Loop.
func (e *Env) NewLoop(opts ...poll.Option) *poll.Loop {
	e.T.Helper()
	all := append([]poll.Option{poll.WithLogger(e.Log), poll.WithClock(e.Clock.Now), poll.WithPause(e.Pause)}, e.pollOpts...)
	l, err := poll.New(e.Store, e.Registry, e.Publisher, e.Park, e.Expirer, append(all, opts...)...)
	if err != nil {
		e.T.Fatal(err)
	}
	return l
}

// NewService builds a sentinel service over the env's stores, registry,
// expirer, publisher and watch index, polling through e.Loop, with its
// logger and clock, then Options.Service, then opts: a test whose option
// needs what was built after Start (a session registry) replaces
// e.Service with it.
func (e *Env) NewService(opts ...sentinels.Option) *sentinels.Service {
	e.T.Helper()
	all := append([]sentinels.Option{sentinels.WithPoller(e.Loop), sentinels.WithIndex(e.index), sentinels.WithLogger(e.Log), sentinels.WithClock(e.Clock.Now)}, e.serviceOpts...)
	svc, err := sentinels.NewService(sentinels.ServiceDeps{Store: e.Store, Seen: e.Seen, Registry: e.Registry, Expirer: e.Expirer,
		Creds: e.Creds, Ledger: sentinels.NewLedger(e.Buckets.Setup), Publisher: e.Publisher}, append(all, opts...)...)
	if err != nil {
		e.T.Fatal(err)
	}
	return svc
}

// StartWorkers starts the delivery workers (after NoWorkers) and stops
// them at cleanup.
func (e *Env) StartWorkers() {
	e.T.Helper()
	if err := e.Workers.Start(context.Background()); err != nil {
		e.T.Fatal(err)
	}
	e.T.Cleanup(e.Workers.Stop)
}

// Watch creates a sentinel through the service: always a new one (the
// request's AllowDuplicate is set, so tests that watch one subject twice
// get two sentinels; Service.Watch is the idempotent call).
func (e *Env) Watch(req sentinel.WatchRequest) *sentinel.Sentinel {
	e.T.Helper()
	req.AllowDuplicate = true
	rec, err := e.Service.Create(context.Background(), req, "")
	if err != nil {
		e.T.Fatalf("watch: %v", err)
	}
	return rec
}

// InboxOf reads a session's whole inbox.
func (e *Env) InboxOf(session string) []sentinel.Message {
	e.T.Helper()
	msgs, _, err := e.Inbox.Read(context.Background(), inbox.Query{SessionID: session, Limit: 500})
	if err != nil {
		e.T.Fatalf("read inbox: %v", err)
	}
	return msgs
}

// WaitInbox waits until the session's inbox holds n messages and returns
// them.
func (e *Env) WaitInbox(session string, n int) []sentinel.Message {
	e.T.Helper()
	var msgs []sentinel.Message
	bustest.Eventually(e.T, 10*time.Second, func() bool {
		msgs = e.InboxOf(session)
		return len(msgs) >= n
	}, "inbox of %s to hold %d messages (has %d)", session, n, len(msgs))
	return msgs
}

// Get returns a sentinel record.
func (e *Env) Get(id string) *sentinel.Sentinel {
	e.T.Helper()
	rec, _, err := e.Store.Get(context.Background(), id)
	if err != nil {
		e.T.Fatalf("get %s: %v", id, err)
	}
	return rec
}

// Fresh returns a sentinel record as the bucket's leader holds it (in a
// cluster a replica may trail a write another node just made).
func (e *Env) Fresh(id string) *sentinel.Sentinel {
	e.T.Helper()
	rec, _, err := e.Store.Fresh(context.Background(), id)
	if err != nil {
		e.T.Fatalf("read %s: %v", id, err)
	}
	return rec
}

// Drained waits until every partition consumer has nothing pending or in
// flight.
func (e *Env) Drained() {
	e.T.Helper()
	ctx := context.Background()
	events, err := e.Bus.JS.Stream(ctx, bus.StreamEvents)
	if err != nil {
		e.T.Fatalf("events stream: %v", err)
	}
	bustest.Eventually(e.T, 10*time.Second, func() bool {
		for p := 0; p < e.Bus.Bus.Cfg.Partitions; p++ {
			c, err := e.Bus.Bus.PartitionConsumer(ctx, p)
			if err != nil {
				return false
			}
			info, err := c.Info(ctx)
			if err != nil || info.NumPending > 0 || info.NumAckPending > 0 {
				return false
			}
			// A consumer counts a message published a moment ago as
			// pending only a moment later: the partition's last message
			// must be acknowledged too.
			last, err := events.GetLastMsgForSubject(ctx, bus.PartitionFilter(p))
			if errors.Is(err, jetstream.ErrMsgNotFound) {
				continue
			}
			if err != nil || info.AckFloor.Stream < last.Sequence {
				return false
			}
		}
		return true
	}, "partitions to drain")
}

// Decisions waits until the journal holds at least n decisions of a
// sentinel and returns them, oldest first.
func (e *Env) Decisions(sentinelID string, n int) []sentinel.Decision {
	e.T.Helper()
	var page sentinel.DecisionPage
	bustest.Eventually(e.T, 10*time.Second, func() bool {
		var err error
		page, err = e.Journal.Sentinel(context.Background(), sentinelID, journal.MaxLimit, 0)
		return err == nil && len(page.Decisions) >= n
	}, "journal of %s to hold %d decisions (has %d)", sentinelID, n, len(page.Decisions))
	return page.Decisions
}

// Event builds a fake event on a GitHub PR subject.
func Event(id, typ, subject string, terminal bool) sentinel.Event {
	ref, err := sentinel.ParseGitHubSubject(subject)
	subjects := []string{subject}
	if err == nil {
		subjects = ref.Subjects()
	}
	return sentinel.NewEvent(id, "//agentproto.local/sentinel/fake", typ, subject, subjects, time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC), typ+" on "+subject, terminal, map[string]any{"n": id})
}

// Reach waits until a goroutine reached the hold's point (30 s at most).
func Reach(t testing.TB, h *pause.Hold, what string) {
	t.Helper()
	select {
	case <-h.Reached():
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: the point was not reached within 30s", what)
	}
}
