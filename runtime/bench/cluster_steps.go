package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

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

// addStepLines adds the _sum and _count samples of the step histograms in
// a Prometheus text exposition to into.
func addStepLines(into metrics.StepTotals, exposition []byte) {
	sc := bufio.NewScanner(bytes.NewReader(exposition))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, metrics.StepMetric+"_")
		if !ok {
			continue
		}
		kind, rest, ok := strings.Cut(rest, `{step="`)
		if !ok || kind != "sum" && kind != "count" {
			continue
		}
		step, value, ok := strings.Cut(rest, `"} `)
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			continue
		}
		t := into[step]
		if kind == "sum" {
			t.Sum += time.Duration(math.Round(v * float64(time.Second)))
		} else {
			t.Count += uint64(v)
		}
		into[step] = t
	}
}
