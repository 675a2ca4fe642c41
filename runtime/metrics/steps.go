package metrics

import (
	"math"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// StepMetric is the name of the per-step histogram of one event's way
// through the node.
const StepMetric = "sentinel_event_step_seconds"

// The steps of one event through the node: the step label values of
// sentinel_event_step_seconds. A push request is read, then handled
// (hook lookup, signature check, parse, publish); the event then waits in
// the events stream until a partition worker takes it; the worker's
// pipeline reads the record from its leader, resolves the target, writes
// the inbox message and the record (beside each other on the direct path,
// one after the other otherwise), and the worker acks.
const (
	StepIngressRead   = "ingress_read"   // the push request's body read
	StepIngressHandle = "ingress_handle" // lookup, verify, parse, publish: until the answer
	StepPublish       = "publish"        // the events stream's publish with PubAck
	StepQueued        = "queued"         // stored in the events stream until a worker starts it
	StepRecordRead    = "record_read"    // the record read from the bucket's leader
	StepResolve       = "resolve"        // the target session's lookup
	StepInbox         = "inbox_write"    // the inbox message's publish with PubAck
	StepRecordWrite   = "record_write"   // the record's compare-and-set
	StepPipeline      = "pipeline"       // the whole pipeline run of one event
)

// Steps are the step label values, in the order an event takes them.
var Steps = []string{StepIngressRead, StepIngressHandle, StepPublish, StepQueued, StepRecordRead, StepResolve, StepInbox, StepRecordWrite, StepPipeline}

type stepHistograms struct {
	vec *prometheus.HistogramVec
	by  map[string]prometheus.Observer
}

func newStepHistograms() stepHistograms {
	vec := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    StepMetric,
		Help:    "Time one event spends in each step of its way through the node, by step.",
		Buckets: prometheus.ExponentialBuckets(10e-6, 2, 18), // 10 us to 1.3 s
	}, []string{"step"})
	by := make(map[string]prometheus.Observer, len(Steps))
	for _, s := range Steps {
		by[s] = vec.WithLabelValues(s)
	}
	return stepHistograms{vec: vec, by: by}
}

// ObserveStep records that step took d. Unknown steps are ignored.
func (m *Metrics) ObserveStep(step string, d time.Duration) {
	if m == nil {
		return
	}
	if o, ok := m.steps.by[step]; ok {
		o.Observe(d.Seconds())
	}
}

// StepSince records that step took the time since start.
func (m *Metrics) StepSince(step string, start time.Time) {
	if m != nil {
		m.ObserveStep(step, time.Since(start))
	}
}

// StepTotal is the sum and count of one step's observations so far.
type StepTotal struct {
	Sum   time.Duration
	Count uint64
}

// StepTotals holds a StepTotal by step.
type StepTotals map[string]StepTotal

// StepTotals reads the step histograms' sums and counts (a nil m reads
// nothing). Two readings subtracted give the mean of each step between them.
func (m *Metrics) StepTotals() StepTotals {
	out := StepTotals{}
	if m == nil {
		return out
	}
	fams, err := m.Registry.Gather()
	if err != nil {
		return out
	}
	for _, f := range fams {
		if f.GetName() != StepMetric {
			continue
		}
		for _, s := range f.GetMetric() {
			var step string
			for _, l := range s.GetLabel() {
				if l.GetName() == "step" {
					step = l.GetValue()
				}
			}
			h := s.GetHistogram()
			out[step] = StepTotal{time.Duration(math.Round(h.GetSampleSum() * float64(time.Second))), h.GetSampleCount()}
		}
	}
	return out
}
