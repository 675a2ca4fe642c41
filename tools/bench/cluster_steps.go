package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/agentproto/sentinel/runtime/metrics"
)

// stepTotals adds up every live node's step histograms
// (sentinel_event_step_seconds, read from its /metrics), so two readings
// give the cluster's mean time per step between them.
func (c *clusterNodes) stepTotals(ctx context.Context) (metrics.StepTotals, error) {
	out := metrics.StepTotals{}
	for i, n := range c.nodes {
		if n == nil {
			continue
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, n.url+"/metrics", nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Authorization", "Bearer "+n.token)
		resp, err := n.http.Do(req)
		if err != nil {
			return nil, fmt.Errorf("read the metrics of %s: %w", c.names[i], err)
		}
		raw, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("read the metrics of %s: %w", c.names[i], err)
		}
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("read the metrics of %s: %d", c.names[i], resp.StatusCode)
		}
		addStepLines(out, raw)
	}
	return out, nil
}

// addStepLines adds the sums and counts of the step histograms in a
// Prometheus text exposition to into (an exposition that does not parse
// adds nothing).
func addStepLines(into metrics.StepTotals, exposition []byte) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(exposition))
	if err != nil {
		return
	}
	fam, ok := fams[metrics.StepMetric]
	if !ok {
		return
	}
	for _, m := range fam.GetMetric() {
		var step string
		for _, l := range m.GetLabel() {
			if l.GetName() == "step" {
				step = l.GetValue()
			}
		}
		h := m.GetHistogram()
		t := into[step]
		t.Sum += time.Duration(math.Round(h.GetSampleSum() * float64(time.Second)))
		t.Count += h.GetSampleCount()
		into[step] = t
	}
}
