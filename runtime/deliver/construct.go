package deliver

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/runtime/metrics"
	"github.com/agentproto/sentinel/runtime/park"
	"github.com/agentproto/sentinel/runtime/pause"
	"github.com/agentproto/sentinel/runtime/sentinels"
)

// ErrMissingDep is NewPipeline's and NewWorkers' refusal of a dependency
// left unset; the error names it.
var ErrMissingDep = errors.New("deliver: dependency missing")

// PipelineDeps are what a pipeline works with; every one is required.
type PipelineDeps struct {
	// Store reads and writes the sentinels' records.
	Store *sentinels.Store
	// Seen is the long seen window behind the record's ring.
	Seen *sentinels.Seen
	// Registry knows the providers (their default event types).
	Registry *providers.Registry
	// Router stores a matched event at its target; a Planner takes the
	// direct path (direct.go).
	Router Router
	// Park keeps the events that cannot be delivered.
	Park *park.Store
	// Expirer expires sentinels and cancels their providers.
	Expirer *sentinels.Expirer
}

// PipelineOption sets one of a pipeline's optional settings.
type PipelineOption func(*Pipeline)

// WithMetrics counts into m (nil, the default: counts nothing).
func WithMetrics(m *metrics.Metrics) PipelineOption {
	return func(p *Pipeline) { p.metrics = m }
}

// WithLogger logs through l (discarded by default).
func WithLogger(l *slog.Logger) PipelineOption { return func(p *Pipeline) { p.log = l } }

// WithClock reads the time from now (time.Now by default): until.at, the
// record's timestamps, the confirm window.
func WithClock(now func() time.Time) PipelineOption { return func(p *Pipeline) { p.now = now } }

// WithDecisions records every decision through d (decisions.go; none by
// default).
func WithDecisions(d DecisionRecorder) PipelineOption {
	return func(p *Pipeline) { p.decisions = d }
}

// WithPause holds the pipeline's and its workers' named pause points at
// pts (points.go; tests only, none by default).
func WithPause(pts *pause.Points) PipelineOption { return func(p *Pipeline) { p.pause = pts } }

// WithRecordReadTimeout bounds Handle's read of the record through the
// records bucket's leader (DefaultRecordReadTimeout by default).
func WithRecordReadTimeout(d time.Duration) PipelineOption {
	return func(p *Pipeline) { p.recordReadTimeout = d }
}

// WithBatches holds the events of sentinels with a batchMs for their
// digest in b (batch.go); without it every event is delivered as it comes.
func WithBatches(b *Batches) PipelineOption { return func(p *Pipeline) { p.batches = b } }

// NewPipeline returns a pipeline over d with opts applied; ErrMissingDep
// names a dependency left unset.
func NewPipeline(d PipelineDeps, opts ...PipelineOption) (*Pipeline, error) {
	switch {
	case d.Store == nil:
		return nil, fmt.Errorf("%w: Store", ErrMissingDep)
	case d.Seen == nil:
		return nil, fmt.Errorf("%w: Seen", ErrMissingDep)
	case d.Registry == nil:
		return nil, fmt.Errorf("%w: Registry", ErrMissingDep)
	case d.Router == nil:
		return nil, fmt.Errorf("%w: Router", ErrMissingDep)
	case d.Park == nil:
		return nil, fmt.Errorf("%w: Park", ErrMissingDep)
	case d.Expirer == nil:
		return nil, fmt.Errorf("%w: Expirer", ErrMissingDep)
	}
	p := &Pipeline{store: d.Store, seen: d.Seen, registry: d.Registry, router: d.Router, park: d.Park, expirer: d.Expirer}
	for _, o := range opts {
		o(p)
	}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	if p.now == nil {
		p.now = time.Now
	}
	return p, nil
}

// WithRouter returns a copy of p that routes through r over the same
// stores and settings: a second handler of the same events (tests script
// a stale node with it).
func (p *Pipeline) WithRouter(r Router) *Pipeline {
	c := *p
	c.router = r
	return &c
}

// Router is the router p stores matched events with.
func (p *Pipeline) Router() Router { return p.router }

// WorkersOption sets one of the workers' optional settings.
type WorkersOption func(*Workers)

// WithConfig sets the workers' retry, deadline and attempt bounds
// (DefaultWorkersConfig by default; unset bounds take their defaults).
func WithConfig(c WorkersConfig) WorkersOption { return func(w *Workers) { w.cfg = c } }

// NewWorkers returns the delivery workers that pull events's partitions
// into pipeline (its metrics, logger, park store and pause points are
// theirs too); ErrMissingDep names a dependency left unset.
func NewWorkers(events EventLog, pipeline *Pipeline, opts ...WorkersOption) (*Workers, error) {
	switch {
	case events == nil:
		return nil, fmt.Errorf("%w: EventLog", ErrMissingDep)
	case pipeline == nil:
		return nil, fmt.Errorf("%w: Pipeline", ErrMissingDep)
	}
	w := &Workers{events: events, pipeline: pipeline, cfg: DefaultWorkersConfig()}
	for _, o := range opts {
		o(w)
	}
	def := DefaultWorkersConfig()
	if w.cfg.RetryBase <= 0 {
		w.cfg.RetryBase = def.RetryBase
	}
	if w.cfg.RetryMax <= 0 {
		w.cfg.RetryMax = def.RetryMax
	}
	if w.cfg.HandleTimeout <= 0 {
		w.cfg.HandleTimeout = def.HandleTimeout
	}
	if w.cfg.MaxAttempts <= 0 {
		w.cfg.MaxAttempts = def.MaxAttempts
	}
	return w, nil
}

// Pipeline is the pipeline the workers run (Replay goes through it).
func (w *Workers) Pipeline() *Pipeline { return w.pipeline }
