package app

import (
	"context"

	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/runtime/cluster"
)

// refreshGauges samples the gauges of the node's metrics: pending messages
// per partition consumer, the inbox stream's depth, and the last GitHub
// rate-limit remaining of each credential and resource the quota governor
// knows (absent until its first GitHub answer), and the cluster gauges. It also creates the poll series of every
// poll-capable provider at zero. It runs from housekeeping and before each
// scrape of /metrics.
func (a *App) refreshGauges(ctx context.Context) {
	a.Workers.ReportPending(ctx)
	a.refreshClusterGauges()
	if a.storage != nil {
		a.Metrics.SetStorage(a.storage.Err() != nil, a.storage.Restarts())
	}
	if n, err := a.Inbox.Depth(ctx); err == nil {
		a.Metrics.SetInboxDepth(float64(n))
	}
	for _, p := range a.Registry.All() {
		slug := p.Info().Slug
		if _, discovered := p.(providers.AvailabilityChecker); discovered {
			continue // an adapter starts on first use, not for a gauge; its series appear with its first poll
		}
		if _, ok := p.(providers.Poller); ok && p.Capabilities().Poll {
			a.Metrics.InitPoller(slug)
		}
	}
	for _, b := range a.QuotaBudgets() {
		if b.Remaining >= 0 {
			a.Metrics.SetGitHubQuota(b.Credential, b.Resource, float64(b.Remaining))
		}
	}
}

// refreshClusterGauges samples the cluster gauges from this node's own
// state (no request): the members its last round read, whether it can
// write, and the leases it holds now.
func (a *App) refreshClusterGauges() {
	if a.Cluster == nil {
		a.Metrics.SetCluster(1, a.owner().Writable() == nil, a.pollPartitions(), len(cluster.Jobs))
		return
	}
	polls, jobs := 0, 0
	for _, item := range a.Cluster.Held() {
		if cluster.IsPollItem(item) {
			polls++
		} else {
			jobs++
		}
	}
	a.Metrics.SetCluster(len(a.Cluster.LiveMembers()), a.owner().Writable() == nil, polls, jobs)
}
