package bench

import (
	"io"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/runtime/metrics"
)

// The step totals read off a node's /metrics text equal the node's own
// reading, and two nodes' add up.
func TestStepLinesOfTheMetricsExposition(t *testing.T) {
	m := metrics.New()
	m.ObserveStep(metrics.StepRecordWrite, 750*time.Microsecond)
	m.ObserveStep(metrics.StepRecordWrite, 250*time.Microsecond)
	m.ObserveStep(metrics.StepQueued, 2*time.Millisecond)
	rec := httptest.NewRecorder()
	m.Handler(nil).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	raw, err := io.ReadAll(rec.Body)
	require.NoError(t, err)

	got := metrics.StepTotals{}
	addStepLines(got, raw)
	require.Equal(t, m.StepTotals(), got)
	addStepLines(got, raw)
	require.Equal(t, uint64(4), got[metrics.StepRecordWrite].Count)
	require.Equal(t, 2*time.Millisecond, got[metrics.StepRecordWrite].Sum)
	require.Equal(t, map[string]float64{metrics.StepRecordWrite: 500, metrics.StepQueued: 2000}, stepMeans(metrics.StepTotals{}, got))
}
