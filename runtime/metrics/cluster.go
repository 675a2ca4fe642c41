package metrics

import "github.com/prometheus/client_golang/prometheus"

// clusterGauges are this node's view of its cluster, sampled by the
// refresh before each scrape (a single node: one member, quorum, and it
// owns every poll partition and job).
type clusterGauges struct {
	members    prometheus.Gauge
	quorum     prometheus.Gauge
	ownedPolls prometheus.Gauge
	ownedJobs  prometheus.Gauge
}

func newClusterGauges() clusterGauges {
	return clusterGauges{
		members:    prometheus.NewGauge(prometheus.GaugeOpts{Name: "sentinel_cluster_members", Help: "Live members of the cluster as this node last read them (1 alone)."}),
		quorum:     prometheus.NewGauge(prometheus.GaugeOpts{Name: "sentinel_cluster_quorum", Help: "1 while this node can store writes (its heartbeat is being stored), else 0."}),
		ownedPolls: prometheus.NewGauge(prometheus.GaugeOpts{Name: "sentinel_cluster_owned_poll_partitions", Help: "Poll partitions this node holds the lease of (all of them alone)."}),
		ownedJobs:  prometheus.NewGauge(prometheus.GaugeOpts{Name: "sentinel_cluster_owned_jobs", Help: "Periodic jobs (expiry, reconcile, tombstones, follow digests) this node holds the lease of."}),
	}
}

func (g clusterGauges) register(f func(prometheus.Collector)) {
	f(g.members)
	f(g.quorum)
	f(g.ownedPolls)
	f(g.ownedJobs)
}

// SetCluster records this node's view of its cluster.
func (m *Metrics) SetCluster(members int, quorum bool, ownedPolls, ownedJobs int) {
	if m == nil {
		return
	}
	q := 0.0
	if quorum {
		q = 1
	}
	m.cluster.members.Set(float64(members))
	m.cluster.quorum.Set(q)
	m.cluster.ownedPolls.Set(float64(ownedPolls))
	m.cluster.ownedJobs.Set(float64(ownedJobs))
}
