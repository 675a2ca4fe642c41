package app

import (
	"context"

	"github.com/agentproto/sentinel/ingress/api"
	"github.com/agentproto/sentinel/runtime/journal"
)

// openJournal provisions the decision journal and starts its writer. Its
// teardown step is pushed before the delivery workers start, so it runs
// after they stop: what they recorded is flushed before the bus closes.
func (a *App) openJournal(ctx context.Context) error {
	j, err := journal.Open(ctx, a.Bus, a.Bus.Cfg.Replicas, a.journalConfig(), journal.WriterConfig{Node: a.Cfg.Node.Name},
		journal.WithOnDrop(a.Metrics.JournalDrop), journal.WithLogger(a.Log.With("component", "journal")))
	if err != nil {
		return err
	}
	a.Journal = j
	a.push("decision journal", j.Stop)
	return nil
}

// journalConfig is the journal's config with its defaults resolved.
func (a *App) journalConfig() journal.Config {
	jcfg := a.Cfg.Journal
	if jcfg.MaxBytes == 0 && a.nats != nil {
		// JetStream reserves a stream's MaxBytes against its storage
		// limit: the default takes a tenth of this server's.
		jcfg.MaxBytes = journal.DefaultMaxBytes(a.nats.MaxStore())
	}
	if jcfg.MaxAge <= 0 {
		jcfg.MaxAge = journal.DefaultMaxAge
	}
	return jcfg
}

// explainerAPI is the in-process api.Explainer of the REST routes, MCP and
// the dashboard, as the request's principal may use it (scope.go). It is
// built once the pipeline exists (wire).
func (a *App) explainerAPI() api.Explainer {
	return scopedExplainer{next: explainerAPI{journal: a.Journal, sentinels: a.Sentinels, park: a.Park, pipeline: a.Workers.Pipeline()}, sentinels: a.sentinelsAPI()}
}
