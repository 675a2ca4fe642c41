package poll

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/runtime/cluster"
	"github.com/agentproto/sentinel/runtime/metrics"
	"github.com/agentproto/sentinel/runtime/park"
	"github.com/agentproto/sentinel/runtime/pause"
	"github.com/agentproto/sentinel/runtime/sentinels"
)

type promCounterVec = *prometheus.CounterVec

// Config configures the poll loop.
type Config struct {
	ActiveInterval time.Duration `mapstructure:"active_interval"`
	IdleInterval   time.Duration `mapstructure:"idle_interval"`
	HotWindow      time.Duration `mapstructure:"hot_window"`
	BatchLimit     int           `mapstructure:"batch_limit"`
	PollTimeout    time.Duration `mapstructure:"poll_timeout"`
}

// DefaultConfig returns the spec's cadence: 15 s hot, 60 s idle, a 10 min
// hot window, 50 events per sentinel per tick.
func DefaultConfig() Config {
	return Config{
		ActiveInterval: 15 * time.Second,
		IdleInterval:   60 * time.Second,
		HotWindow:      10 * time.Minute,
		BatchLimit:     50,
		PollTimeout:    60 * time.Second,
	}
}

// Validate checks the config.
func (c Config) Validate() error {
	if c.ActiveInterval <= 0 || c.IdleInterval <= 0 || c.HotWindow <= 0 {
		return errors.New("poll: intervals and hot window must be positive")
	}
	if c.BatchLimit < 1 || c.BatchLimit > 1000 {
		return errors.New("poll: batch_limit must be within 1..1000")
	}
	return nil
}

// Loop is the poll loop. Build it with New.
type Loop struct {
	cfg        Config
	store      *sentinels.Store
	registry   *providers.Registry
	publisher  *Publisher
	parked     *park.Store
	expirer    *sentinels.Expirer
	metrics    *metrics.Metrics
	log        *slog.Logger
	now        func() time.Time
	after      func(d time.Duration) <-chan time.Time
	onInterval func(d time.Duration)
	ownership  cluster.Ownership
	pause      *pause.Points
	// fenceTimeout bounds the fence's read of the cursor through the
	// records bucket's leader.
	fenceTimeout time.Duration
	// budget, when set, admits each poll within its credential's quota
	// (budget.go; the GitHub quota governor).
	budget Budget

	tick sync.Mutex
	kick chan struct{}
	// kicked holds what the pending kicks asked for: a whole tick (full)
	// or the sentinels of some poll keys only (targets).
	kickMu  sync.Mutex
	full    bool
	targets []func(key string) bool
	// sweepKick asks the cancel worker for a tombstone sweep; workerUp is
	// set while Run's worker runs (see cancels.go).
	sweepKick chan struct{}
	workerUp  atomic.Bool
	// lastPublishMs is when a tick last published a fresh event: delivery
	// is asynchronous, so a tick that just published keeps the loop hot
	// before the record's lastEventTs catches up.
	lastPublishMs atomic.Int64
	// lastPruneMs is when the tick last purged delete markers.
	lastPruneMs atomic.Int64
	// turn is where the next tick starts in the record list when a Budget
	// deferred polls (budget.go): the first sentinel the budget refused
	// goes first next time, so a small budget reaches every sentinel in
	// turn.
	turn atomic.Int64
}

// Run ticks until ctx ends: after each tick it recomputes the interval and
// waits for it (or a Kick). A KickKeys polls its sentinels at once
// without moving the next tick. Run owns the cancel worker (cancels.go),
// which it starts with a sweep and stops, cancelling the cancels in
// flight, before it returns.
func (l *Loop) Run(ctx context.Context) error {
	stopCancels := l.startCancels(ctx)
	defer stopCancels()
	for {
		d := l.Interval(ctx)
		if l.onInterval != nil {
			l.onInterval(d)
		}
		timer := l.after(d)
		for waiting := true; waiting; {
			select {
			case <-ctx.Done():
				return nil
			case <-timer:
				waiting = false
			case <-l.kick:
				full, targets := l.takeKicks()
				if full {
					waiting = false
				} else if len(targets) > 0 {
					l.pollKeys(ctx, targets)
				}
			}
		}
		l.TryTick(ctx)
	}
}

// Interval returns the active interval when any pollable sentinel delivered
// an event within the hot window, else the idle interval.
func (l *Loop) Interval(ctx context.Context) time.Duration {
	hotSince := l.now().Add(-l.cfg.HotWindow).UnixMilli()
	if p := l.lastPublishMs.Load(); p > 0 && p >= hotSince {
		return l.cfg.ActiveInterval
	}
	// A scan of the mirror, without copying a record.
	hot, err := l.store.Select(ctx, func(r *sentinel.Sentinel) bool {
		return r.Status.Pollable() && r.LastEventTs > 0 && r.LastEventTs >= hotSince
	})
	if err != nil || len(hot) > 0 {
		return l.cfg.ActiveInterval
	}
	return l.cfg.IdleInterval
}

// pruneEvery is how often the expiry job's owner purges old delete
// markers of removed sentinels.
const pruneEvery = time.Hour

// pruneMarkers purges the records bucket's delete markers older than
// sentinels.DeleteMarkerRetention, at most once per pruneEvery.
func (l *Loop) pruneMarkers(ctx context.Context) {
	now := l.now().UnixMilli()
	if last := l.lastPruneMs.Load(); last != 0 && now-last < pruneEvery.Milliseconds() {
		return
	}
	l.lastPruneMs.Store(now)
	if err := l.store.PurgeDeleteMarkers(ctx, sentinels.DeleteMarkerRetention); err != nil {
		l.log.Warn("purging removed sentinels' markers failed", "err", err)
	}
}

// TryTick runs one tick unless one is in flight; it reports whether it ran.
func (l *Loop) TryTick(ctx context.Context) bool {
	if !l.tick.TryLock() {
		return false
	}
	defer l.tick.Unlock()
	l.runTick(ctx)
	return true
}

// PollNow runs one tick over every pollable sentinel, waiting for an
// in-flight tick to finish first.
func (l *Loop) PollNow(ctx context.Context) {
	l.tick.Lock()
	defer l.tick.Unlock()
	l.runTick(withInteractive(ctx))
}

func (l *Loop) runTick(ctx context.Context) {
	own := l.ownership
	if own.Writable() != nil {
		return // cut off: a majority node polls and sweeps instead
	}
	if own.OwnsJob(cluster.JobExpiry) {
		if _, err := l.expirer.Sweep(ctx); err != nil {
			l.log.Warn("expiry sweep failed", "err", err)
		}
	}
	if own.OwnsJob(cluster.JobTombstones) {
		l.sweepCancels(ctx)
	}
	if own.OwnsJob(cluster.JobExpiry) {
		l.pruneMarkers(ctx)
	}
	// A whole tick reads every record without copying one (Store.Shared):
	// pollOne only reads its record and hands the provider a copy of the
	// handle.
	recs, err := l.store.Shared(ctx)
	if err != nil {
		l.log.Warn("poll tick: list sentinels failed", "err", err)
		return
	}
	// The polls of one tick share a providers.Tick (local-gh makes each GET
	// once per tick for every sentinel of a PR or repository).
	ctx = providers.WithTick(ctx)
	start := l.startOf(len(recs))
	refused := -1
	for i := range recs {
		if ctx.Err() != nil {
			return
		}
		at := (start + i) % len(recs)
		r := recs[at]
		if !r.Status.Pollable() || !own.OwnsPoll(pollKey(r)) {
			continue
		}
		if !l.admitted(ctx, r) {
			if refused < 0 {
				refused = at
			}
			continue
		}
		l.pollOne(ctx, r)
	}
	l.nextTurn(refused)
}

// pollOne polls one sentinel and persists what the poll moved. rec may be
// the mirror's own record (Store.Shared): it is only read, and the
// provider gets a copy of its handle.
func (l *Loop) pollOne(ctx context.Context, rec *sentinel.Sentinel) {
	prov, ok := l.registry.Get(rec.Provider)
	if !ok {
		return
	}
	poller, ok := prov.(providers.Poller)
	if !ok || !prov.Capabilities().Poll {
		return
	}
	// The logger with the sentinel's attributes is built only when
	// something is logged (a quiet poll logs nothing).
	log := func() *slog.Logger { return l.log.With("sentinel", rec.ID, "provider", rec.Provider) }
	handle := sentinels.HandleCopy(rec.Handle)
	pctx, cancel := context.WithTimeout(ctx, l.cfg.PollTimeout)
	defer cancel()
	start := time.Now()
	res, err := poller.Poll(pctx, handle, l.cfg.BatchLimit)
	l.metrics.ObservePoll(rec.Provider, time.Since(start).Seconds())
	if err != nil {
		l.metrics.IncVec(func(m *metrics.Metrics) promCounterVec { return m.PollErrors }, rec.Provider)
		log().Warn("poll failed", "err", err)
		l.setLastError(ctx, rec.ID, "poll: "+err.Error())
		return
	}
	if err := l.pause.At(ctx, PointPolled, rec.ID); err != nil {
		log().Warn("poll dropped", "err", err)
		return
	}
	if len(res.Events) > 0 || len(res.Malformed) > 0 {
		if why := l.stale(ctx, rec); why != "" {
			l.metrics.IncVec(func(m *metrics.Metrics) promCounterVec { return m.PollErrors }, rec.Provider)
			log().Info("poll result dropped before publishing: " + why)
			return
		}
	}
	// Park malformed items durably before the cursor moves past them.
	for _, m := range res.Malformed {
		item := m
		msgID := "mal:" + rec.ID + ":" + item.Digest
		if item.Seq != nil {
			msgID += ":" + strconv.FormatInt(*item.Seq, 10)
		}
		if err := l.parked.Park(pctx, rec.ID, sentinel.Parked{SentinelID: rec.ID, Item: item, Reason: "malformed: " + item.Error}, msgID); err != nil {
			log().Warn("parking a malformed item failed; batch not acknowledged", "err", err)
			l.setLastError(ctx, rec.ID, "quarantine write failed; batch not acknowledged")
			return
		}
		l.metrics.IncVec(func(m *metrics.Metrics) promCounterVec { return m.Parked }, "malformed")
	}
	fresh, err := l.publisher.Publish(pctx, rec.ID, res.Events, OriginPoll)
	if fresh > 0 {
		l.lastPublishMs.Store(l.now().UnixMilli())
	}
	if err != nil {
		log().Warn("publishing polled events failed; batch not acknowledged", "err", err)
		l.setLastError(ctx, rec.ID, "publish failed; batch not acknowledged: "+err.Error())
		return
	}
	lastError := ""
	if res.Failure != "" {
		l.metrics.IncVec(func(m *metrics.Metrics) promCounterVec { return m.PollErrors }, rec.Provider)
		lastError = truncate("poll: "+res.Failure, 1000)
	}
	if res.Cursor == rec.Handle.Cursor && rec.LastError == lastError {
		return
	}
	_, err = l.store.Update(ctx, rec.ID, func(r *sentinel.Sentinel) error {
		// Fenced: the cursor moves only from the cursor that was polled. A
		// node that lost poll ownership mid-poll (a pause, a partition)
		// finds its successor's newer cursor here and writes nothing.
		if r.Handle.Cursor != rec.Handle.Cursor {
			return errStaleCursor
		}
		r.Handle.Cursor = res.Cursor
		r.LastError = lastError
		return nil
	})
	if errors.Is(err, errStaleCursor) {
		l.metrics.IncVec(func(m *metrics.Metrics) promCounterVec { return m.PollErrors }, rec.Provider)
		log().Info("poll cursor moved on elsewhere; this poll's cursor is dropped (its events were published with their ids, so nothing repeats)")
		return
	}
	if err != nil {
		if !errors.Is(err, sentinels.ErrNotFound) {
			log().Warn("persisting the poll cursor failed", "err", err)
		}
		return
	}
	if res.Cursor != rec.Handle.Cursor {
		// Ack with the handle that was polled (its cursor is the old one).
		if err := poller.Ack(pctx, handle, res.Cursor); err != nil {
			log().Warn("provider ack failed", "err", err)
		}
	}
}

// stale reports why a poll that found something must not publish it (""
// when it may): this node's lease on the sentinel's poll partition lapsed
// during the poll (a pause, a partition: the lease counts locally only
// until a fifth of bus.lease_ttl before the bucket ages it out, so a
// successor cannot hold it yet while it still counts here), or the cursor
// moved on (read through the bucket's leader) since the poll began. A
// provider's ids may depend on what it saw (local-gh mints them from the
// observed state), so a stale poller's events are not duplicates of its
// successor's: published after them, they would report an intermediate
// state after a newer one (issue 21, item 5). The cursor write after the
// publish is fenced on the polled cursor as well.
func (l *Loop) stale(ctx context.Context, rec *sentinel.Sentinel) string {
	own := l.ownership
	if own.Writable() != nil || !own.OwnsPoll(pollKey(rec)) {
		return "this node's poll lease lapsed during the poll"
	}
	// Bounded: the read is a request to the bucket's leader, which no one
	// answers while that leader is dead and its successor not yet elected
	// (the other servers still hold the API's subscription, so there is no
	// "no responders" either). Under the tick's unbounded context it would
	// wait for ever, holding the tick: the node would keep its poll lease
	// (the membership goroutine renews it) and never poll again.
	fctx, cancel := context.WithTimeout(ctx, l.fenceTimeout)
	defer cancel()
	cur, _, err := l.store.Fresh(fctx, rec.ID)
	if err != nil {
		return "reading the cursor back failed: " + err.Error()
	}
	if cur.Handle.Cursor != rec.Handle.Cursor {
		return "the cursor moved on elsewhere during the poll"
	}
	return ""
}

// DefaultFenceTimeout is the default of WithFenceTimeout: a leader read
// answers in milliseconds, and a raft election takes 4-9 s; a fence that
// times out drops the poll's result (the next tick polls again).
const DefaultFenceTimeout = 5 * time.Second

// pollKey is the ownership key of a sentinel: its first clause's
// repository or subject (a sentinel's handle polls for all its clauses).
func pollKey(r *sentinel.Sentinel) string {
	if len(r.Spec.Match) == 0 {
		return r.ID
	}
	return cluster.PollKey(r.Spec.Match[0].Subject)
}

// PointPolled is reached (key: the sentinel id) after a poll returned and
// before anything it found is stored: a test holds a poller here while
// another node takes its poll over.
const PointPolled pause.Point = "poll.polled"

// errStaleCursor fences a poll whose cursor another poll moved on.
var errStaleCursor = errors.New("poll cursor moved on")

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

func (l *Loop) setLastError(ctx context.Context, id, msg string) {
	msg = truncate(msg, 1000)
	_, err := l.store.Update(ctx, id, func(r *sentinel.Sentinel) error {
		if r.LastError == msg {
			return sentinels.ErrSkip
		}
		r.LastError = msg
		return nil
	})
	if err != nil && !errors.Is(err, sentinels.ErrNotFound) {
		l.log.Warn("recording lastError failed", "sentinel", id, "err", fmt.Sprint(err))
	}
}
