package metrics

import "github.com/prometheus/client_golang/prometheus"

// storageGauges are the storage guard's state (runtime/storage), sampled
// by the refresh before each scrape.
type storageGauges struct {
	full     prometheus.Gauge
	restarts prometheus.Gauge
}

func newStorageGauges() storageGauges {
	return storageGauges{
		full:     prometheus.NewGauge(prometheus.GaugeOpts{Name: "sentinel_storage_full", Help: "1 while the node refuses writes because its JetStream storage is full (nats.max_store, or its disk short of nats.min_free), else 0."}),
		restarts: prometheus.NewGauge(prometheus.GaugeOpts{Name: "sentinel_storage_restarts", Help: "Restarts of the embedded nats-server after a full disk since the node started."}),
	}
}

func (g storageGauges) register(f func(prometheus.Collector)) {
	f(g.full)
	f(g.restarts)
}

// SetStorage records the storage guard's state.
func (m *Metrics) SetStorage(full bool, restarts int) {
	if m == nil {
		return
	}
	v := 0.0
	if full {
		v = 1
	}
	m.storage.full.Set(v)
	m.storage.restarts.Set(float64(restarts))
}
