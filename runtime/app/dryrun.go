package app

import (
	"context"
	"time"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/api"
	"github.com/agentproto/sentinel/runtime/journal"
)

// watchAPI is the sentinel service of the surfaces: sentinelAPI plus dry
// runs against the decision journal (api.DryRunner).
type watchAPI struct {
	sentinelAPI
	journal *journal.Journal
	now     func() time.Time
}

var _ api.DryRunner = watchAPI{}

// sentinelsAPI is the in-process api.Sentinels of the REST routes, MCP
// and the dashboard, as the request's principal may use it (scope.go). It
// is built once the journal is open (wire).
func (a *App) sentinelsAPI() scopedSentinels {
	return scopedSentinels{next: watchAPI{sentinelAPI: sentinelAPI{svc: a.Sentinels, park: a.Park}, journal: a.Journal, now: a.now}}
}

// maxDryRunExamples bounds the examples of a dry run (the newest kept).
const maxDryRunExamples = 10

// DryRun validates the request as a create would, resolves the provider
// and runs the spec against the events the journal holds (whatever
// sentinel received them, each event once) within journal.max_age, at most
// the newest journal.dry_run_scan entries: how many it would have matched.
// Truncated says the window was cut short of journal.max_age (Since tells
// where it began). It creates nothing and never calls the provider's
// create.
func (w watchAPI) DryRun(ctx context.Context, req sentinel.WatchRequest, caller string) (api.DryRun, error) {
	spec, prov, err := w.svc.Plan(ctx, req, caller)
	if err != nil {
		return api.DryRun{}, err
	}
	j := w.journal
	window := j.MaxAge
	since := w.now().Add(-window)
	out := api.DryRun{Provider: prov.Info().Slug, Spec: spec, Examples: []api.DryRunExample{}}
	// At most DryRunScan entries are read, so the set is bounded too.
	seen := map[string]bool{}
	first, cut, err := j.Recent(ctx, since, j.DryRunScan, func(e sentinel.Decision) bool {
		if seen[e.EventID] {
			return true
		}
		seen[e.EventID] = true
		out.Scanned++
		if !spec.Matches(e.Event(), prov.DefaultTypes) {
			return true
		}
		out.Matched++
		out.Examples = append(out.Examples, api.DryRunExample{EventID: e.EventID, Type: e.Type, Subject: e.Subject, Time: e.Time, Summary: e.Summary})
		if len(out.Examples) > maxDryRunExamples {
			out.Examples = out.Examples[1:]
		}
		return true
	})
	if err != nil {
		return api.DryRun{}, err
	}
	if first.After(since) {
		since = first
	}
	out.Truncated = cut
	out.Since = sentinel.FormatTime(since.Truncate(time.Millisecond))
	return out, nil
}
