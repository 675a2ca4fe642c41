package metrics_test

import (
	"testing"
	"time"

	"github.com/agentproto/sentinel/runtime/metrics"
)

// Step observations add up per step, an unknown step is ignored, and a nil
// Metrics records and reads nothing.
func TestStepTotals(t *testing.T) {
	m := metrics.New()
	m.ObserveStep(metrics.StepInbox, 300*time.Microsecond)
	m.ObserveStep(metrics.StepInbox, 100*time.Microsecond)
	m.ObserveStep(metrics.StepPublish, time.Millisecond)
	m.ObserveStep("no-such-step", time.Second)
	got := m.StepTotals()
	if in := got[metrics.StepInbox]; in.Count != 2 || in.Sum != 400*time.Microsecond {
		t.Fatalf("inbox_write = %+v, want 2 observations summing to 400us", in)
	}
	if p := got[metrics.StepPublish]; p.Count != 1 || p.Sum != time.Millisecond {
		t.Fatalf("publish = %+v", p)
	}
	if _, ok := got["no-such-step"]; ok {
		t.Fatal("an unknown step was recorded")
	}
	if len(got) != len(metrics.Steps) {
		t.Fatalf("%d steps read, want every known step (%d) at zero or more", len(got), len(metrics.Steps))
	}
	var none *metrics.Metrics
	none.ObserveStep(metrics.StepInbox, time.Second)
	if len(none.StepTotals()) != 0 {
		t.Fatal("a nil Metrics read steps")
	}
}
