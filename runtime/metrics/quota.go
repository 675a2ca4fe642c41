package metrics

import "github.com/prometheus/client_golang/prometheus"

// throttledPolls reports the polls the quota governor deferred, read from
// the governor at scrape time.
type throttledPolls struct {
	desc *prometheus.Desc
	read func() float64
}

// RegisterThrottledPolls exports sentinel_poll_throttled_total, the polls
// the GitHub quota governor deferred (read at each scrape). Call it once.
func (m *Metrics) RegisterThrottledPolls(read func() float64) {
	if m == nil {
		return
	}
	m.Registry.MustRegister(&throttledPolls{
		desc: prometheus.NewDesc("sentinel_poll_throttled_total", "Polls the GitHub quota governor deferred to keep within a credential's budget.", nil, nil),
		read: read,
	})
}

// Describe implements prometheus.Collector.
func (t *throttledPolls) Describe(ch chan<- *prometheus.Desc) { ch <- t.desc }

// Collect implements prometheus.Collector.
func (t *throttledPolls) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(t.desc, prometheus.CounterValue, t.read())
}
