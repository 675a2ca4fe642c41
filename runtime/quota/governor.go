package quota

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentproto/sentinel"
)

// Defaults of a Governor.
const (
	DefaultReserveFraction = 0.1
	DefaultReserveLeast    = 10
)

// Sample is what one GitHub answer says of its credential's rate limit
// (the node adapts github.RateSample to it).
type Sample struct {
	Credential, Resource string
	Limit, Remaining     int
	Used                 int
	Reset                time.Time
	// Known is false when the answer carried no rate-limit headers.
	Known bool
	// Free is a 304 to a conditional request: GitHub charged no point.
	// Every other answer with rate-limit headers, but a secondary limit,
	// spent one (REST). The governor does not read the cost from the
	// used/remaining deltas: other nodes and processes spend the same
	// credential between two answers.
	Free bool
	// Secondary is a secondary limit, RetryAfter the wait GitHub asks.
	Secondary  bool
	RetryAfter time.Duration
}

// Config configures a Governor.
type Config struct {
	// Node names this node in the budgets it reports.
	Node string
	// Now is the clock (default time.Now); it must agree with GitHub's
	// X-RateLimit-Reset (tests inject the fake GitHub's clock).
	Now func() time.Time
	// Log receives operational messages.
	Log *slog.Logger
	// ReserveFraction of each limit (default 0.1), and at least
	// ReserveLeast points (default 10), are kept for interactive calls.
	ReserveFraction float64
	ReserveLeast    int
	// Nodes is how many nodes share the credentials (default 1): each
	// paces its polls to its share of the budget.
	Nodes func() int
	// CredentialOf names the credential and resource a poll of provider
	// on handle h spends; ok false for a poll that spends no GitHub quota
	// (admitted always).
	CredentialOf func(provider string, h sentinel.Handle) (credential, resource string, ok bool)
}

// Governor is one node's view of the cluster's GitHub budgets. Safe for
// concurrent use; Open starts its goroutines and Stop ends them.
type Governor struct {
	cfg Config
	kv  jetstream.KeyValue

	mu      sync.Mutex
	budgets map[string]*Budget
	// next is, per key, when this node may start its next paced poll: the
	// points its answers spent moved it on (spent).
	next map[string]time.Time
	// dirty are the keys whose local reports are not in the bucket yet.
	dirty map[string]bool

	throttled atomic.Int64
	flush     chan struct{}
	cancel    context.CancelFunc
	wg        sync.WaitGroup
}

// Bus is what the governor needs of the bus (*bus.Bus is one): its bucket
// provisioned.
type Bus interface {
	EnsureKeyValue(ctx context.Context, cfg jetstream.KeyValueConfig) (jetstream.KeyValue, error)
}

// Open provisions the bucket, loads the budgets other nodes reported and
// starts the watcher and the writer; stop them with Stop.
func Open(ctx context.Context, b Bus, cfg Config) (*Governor, error) {
	kv, err := b.EnsureKeyValue(ctx, BucketConfig())
	if err != nil {
		return nil, fmt.Errorf("quota bucket: %w", err)
	}
	return start(ctx, kv, cfg)
}

func start(ctx context.Context, kv jetstream.KeyValue, cfg Config) (*Governor, error) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.ReserveFraction <= 0 {
		cfg.ReserveFraction = DefaultReserveFraction
	}
	if cfg.ReserveLeast <= 0 {
		cfg.ReserveLeast = DefaultReserveLeast
	}
	if cfg.Nodes == nil {
		cfg.Nodes = func() int { return 1 }
	}
	g := &Governor{cfg: cfg, kv: kv, budgets: map[string]*Budget{}, next: map[string]time.Time{}, dirty: map[string]bool{}, flush: make(chan struct{}, 1)}
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	w, err := kv.WatchAll(wctx)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("watch %s: %w", Bucket, err)
	}
	g.cancel = cancel
	ready := make(chan struct{})
	g.wg.Add(2)
	go g.watch(w, ready)
	go g.write(wctx)
	select {
	case <-ready:
	case <-ctx.Done():
		g.Stop()
		return nil, fmt.Errorf("load %s: %w", Bucket, context.Cause(ctx))
	}
	return g, nil
}

// Stop ends the watcher and the writer (after one last write).
func (g *Governor) Stop() {
	if g.cancel != nil {
		g.cancel()
	}
	g.wg.Wait()
}

// watch folds the bucket's entries into the view until Stop.
func (g *Governor) watch(w jetstream.KeyWatcher, ready chan struct{}) {
	defer g.wg.Done()
	defer func() { _ = w.Stop() }()
	once := sync.OnceFunc(func() { close(ready) })
	defer once()
	for e := range w.Updates() {
		if e == nil {
			once()
			continue
		}
		if e.Operation() != jetstream.KeyValuePut {
			continue
		}
		var b Budget
		if json.Unmarshal(e.Value(), &b) != nil || b.Credential == "" {
			continue
		}
		g.mu.Lock()
		g.local(e.Key(), b.Credential, b.Resource).merge(b)
		g.mu.Unlock()
	}
}

// local returns (creating) the view's budget of k (mu must be held).
func (g *Governor) local(k, credential, resource string) *Budget {
	b := g.budgets[k]
	if b == nil {
		b = &Budget{Credential: credential, Resource: resource, Remaining: -1}
		g.budgets[k] = b
	}
	return b
}

// Observe records one answer's sample. It never blocks: the bucket is
// written by the writer goroutine, at once for a secondary limit.
func (g *Governor) Observe(s Sample) {
	if s.Credential == "" {
		return
	}
	if s.Resource == "" {
		s.Resource = "core"
	}
	now := g.cfg.Now()
	k := key(s.Credential, s.Resource)
	g.mu.Lock()
	b := g.local(k, s.Credential, s.Resource)
	if s.Known {
		b.merge(Budget{Limit: s.Limit, Remaining: s.Remaining, Used: s.Used, Reset: s.Reset})
		if !s.Free && !s.Secondary {
			g.spent(k, b, 1, now)
		}
	}
	if s.Secondary {
		wait := max(s.RetryAfter, time.Second)
		if b.Backoff > 0 && now.Sub(b.PausedUntil) < backoffMemory {
			wait = max(wait, min(2*b.Backoff, maxBackoff))
		}
		if until := now.Add(wait); until.After(b.PausedUntil) {
			b.PausedUntil, b.Backoff = until, wait
		}
		b.Secondaries++
		g.cfg.Log.Warn("GitHub secondary rate limit: credential paused cluster-wide", "credential", s.Credential, "resource", s.Resource, "for", wait)
	}
	b.UpdatedAt, b.Node = now, g.cfg.Node
	g.dirty[k] = true
	g.mu.Unlock()
	select {
	case g.flush <- struct{}{}:
	default:
	}
}

// write stores the dirty budgets, merged with the stored ones by
// compare-and-set, whenever Observe asks, until ctx ends.
func (g *Governor) write(ctx context.Context) {
	defer g.wg.Done()
	for {
		select {
		case <-ctx.Done():
			g.store(context.Background())
			return
		case <-g.flush:
			g.store(ctx)
		}
	}
}

// store writes every dirty budget (bounded per call).
func (g *Governor) store(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	g.mu.Lock()
	var todo []Budget
	var keys []string
	for k := range g.dirty {
		todo = append(todo, *g.budgets[k])
		keys = append(keys, k)
	}
	clear(g.dirty)
	g.mu.Unlock()
	for i, b := range todo {
		if err := g.put(ctx, keys[i], b); err != nil {
			g.cfg.Log.Warn("quota budget not shared", "credential", b.Credential, "resource", b.Resource, "err", err)
		}
	}
}

// put merges b into the stored budget of k under compare-and-set.
func (g *Governor) put(ctx context.Context, k string, b Budget) error {
	for range 5 {
		var rev uint64
		e, err := g.kv.Get(ctx, k)
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound):
		case err != nil:
			return err
		default:
			rev = e.Revision()
			var stored Budget
			if json.Unmarshal(e.Value(), &stored) == nil {
				merged := stored
				merged.merge(b)
				b = merged
			}
		}
		raw, err := json.Marshal(b)
		if err != nil {
			return err
		}
		if rev == 0 {
			_, err = g.kv.Create(ctx, k, raw)
		} else {
			_, err = g.kv.Update(ctx, k, raw, rev)
		}
		if err == nil || !(errors.Is(err, jetstream.ErrKeyExists) || isWrongSeq(err)) {
			return err
		}
	}
	return errors.New("quota budget changed concurrently five times")
}

// isWrongSeq reports a compare-and-set lost to another writer.
func isWrongSeq(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence
}

// Budgets returns the view, ordered by credential and resource.
func (g *Governor) Budgets() []Budget {
	g.mu.Lock()
	out := make([]Budget, 0, len(g.budgets))
	for _, b := range g.budgets {
		out = append(out, *b)
	}
	g.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].Credential != out[j].Credential {
			return out[i].Credential < out[j].Credential
		}
		return out[i].Resource < out[j].Resource
	})
	return out
}

// PausedUntil is when the secondary-limit pause of credential ends on
// every node, as this node knows it (the latest over its resources; the
// zero time when none is in force). The node's GitHub clients ask it
// before each call (github.ClientConfig.Hold), so a pause stops every
// call on the credential, not only polls.
func (g *Governor) PausedUntil(credential string) time.Time {
	if g == nil {
		return time.Time{}
	}
	now := g.cfg.Now()
	g.mu.Lock()
	defer g.mu.Unlock()
	var until time.Time
	for _, b := range g.budgets {
		if b.Credential == credential && b.PausedUntil.After(until) && b.Paused(now) {
			until = b.PausedUntil
		}
	}
	return until
}

// Throttled counts the polls Admit deferred.
func (g *Governor) Throttled() int64 { return g.throttled.Load() }
