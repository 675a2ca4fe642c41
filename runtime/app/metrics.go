package app

import (
	"context"

	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/github"
)

// githubClient is implemented by providers that talk to GitHub through the
// in-process REST client (local-gh).
type githubClient interface{ Client() *github.Client }

// refreshGauges samples the gauges of the node's metrics: pending messages
// per partition consumer, the inbox stream's depth, and the last GitHub
// rate-limit remaining seen by each provider with a REST client (absent
// until its first GitHub answer). It also creates the poll series of every
// poll-capable provider at zero. It runs from housekeeping and before each
// scrape of /metrics.
func (a *App) refreshGauges(ctx context.Context) {
	a.Workers.ReportPending(ctx)
	if info, err := a.Bus.Inbox.Info(ctx); err == nil {
		a.Metrics.SetInboxDepth(float64(info.State.Msgs))
	}
	for _, p := range a.Registry.All() {
		slug := p.Info().Slug
		if _, ok := p.(providers.Poller); ok && p.Capabilities().Poll {
			a.Metrics.InitPoller(slug)
		}
		if gc, ok := p.(githubClient); ok && gc.Client() != nil {
			if st := gc.Client().Stats(); st.RateRemaining >= 0 {
				a.Metrics.SetGitHubQuota(slug, float64(st.RateRemaining))
			}
		}
	}
}
