package poll

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/runtime/cluster"
	"github.com/agentproto/sentinel/runtime/metrics"
	"github.com/agentproto/sentinel/runtime/park"
	"github.com/agentproto/sentinel/runtime/pause"
	"github.com/agentproto/sentinel/runtime/sentinels"
)

// ErrMissingDep is returned by New when a required dependency is nil.
var ErrMissingDep = errors.New("poll: missing dependency")

// Option adjusts a Loop built by New.
type Option func(*Loop)

// WithConfig sets the cadence (DefaultConfig by default).
func WithConfig(c Config) Option { return func(l *Loop) { l.cfg = c } }

// WithMetrics records poll durations, errors and parked events in m.
func WithMetrics(m *metrics.Metrics) Option { return func(l *Loop) { l.metrics = m } }

// WithLogger logs the loop's failures to log (discarded by default).
func WithLogger(log *slog.Logger) Option { return func(l *Loop) { l.log = log } }

// WithClock reads the time from now (time.Now by default).
func WithClock(now func() time.Time) Option { return func(l *Loop) { l.now = now } }

// WithAfter makes the loop wait for its next tick on after(d) (time.After
// by default); tests inject a channel they fire.
func WithAfter(after func(d time.Duration) <-chan time.Time) Option {
	return func(l *Loop) { l.after = after }
}

// WithOnInterval calls observe with every interval the loop schedules.
func WithOnInterval(observe func(d time.Duration)) Option {
	return func(l *Loop) { l.onInterval = observe }
}

// WithOwnership says which sentinels this node polls and whether it runs
// the expiry sweep and the cancel retries (default: a single node, all of
// them).
func WithOwnership(own cluster.Ownership) Option { return func(l *Loop) { l.ownership = own } }

// WithPause holds the loop at its named pause points (tests):
// PointPolled, PointSweepSkipped.
func WithPause(p *pause.Points) Option { return func(l *Loop) { l.pause = p } }

// WithFenceTimeout bounds the fence's read of the cursor through the
// records bucket's leader (DefaultFenceTimeout when d <= 0).
func WithFenceTimeout(d time.Duration) Option { return func(l *Loop) { l.fenceTimeout = d } }

// WithBudget admits each poll within its credential's quota (budget.go;
// the GitHub quota governor). Without it every due sentinel is polled.
func WithBudget(b Budget) Option { return func(l *Loop) { l.budget = b } }

// New builds the poll loop over the sentinel store, the provider registry,
// the publisher of polled events, the park store of malformed events and
// the expirer (expiry sweep, cancel retries). It returns ErrMissingDep
// when one of them is nil.
func New(store *sentinels.Store, registry *providers.Registry, publisher *Publisher, parked *park.Store, expirer *sentinels.Expirer, opts ...Option) (*Loop, error) {
	switch {
	case store == nil:
		return nil, fmt.Errorf("%w: store", ErrMissingDep)
	case registry == nil:
		return nil, fmt.Errorf("%w: registry", ErrMissingDep)
	case publisher == nil:
		return nil, fmt.Errorf("%w: publisher", ErrMissingDep)
	case parked == nil:
		return nil, fmt.Errorf("%w: park store", ErrMissingDep)
	case expirer == nil:
		return nil, fmt.Errorf("%w: expirer", ErrMissingDep)
	}
	l := &Loop{cfg: DefaultConfig(), store: store, registry: registry, publisher: publisher, parked: parked, expirer: expirer,
		kick: make(chan struct{}, 1), sweepKick: make(chan struct{}, 1)}
	for _, o := range opts {
		o(l)
	}
	if l.log == nil {
		l.log = slog.New(slog.DiscardHandler)
	}
	if l.now == nil {
		l.now = time.Now
	}
	if l.after == nil {
		l.after = time.After
	}
	if l.ownership == nil {
		l.ownership = cluster.Solo{}
	}
	if l.fenceTimeout <= 0 {
		l.fenceTimeout = DefaultFenceTimeout
	}
	return l, nil
}
