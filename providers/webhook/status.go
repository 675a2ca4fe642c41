package webhook

import (
	"context"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
)

// Status reports whether the handle's hook is healthy: the record exists
// and still holds this holder, the hook exists on GitHub, is active, and
// its URL still points at this daemon (<origin>/inbound/sentinel-<key>,
// origin being the current public URL, else the one the hook was pointed
// at). Extra carries the hook id, the holder count and the reconciliation
// counts, never the secret. Only a store failure is returned as an error.
func (p *Provider) Status(ctx context.Context, h sentinel.Handle) (providers.Health, error) {
	repo, key, holder := h.StateString("repo"), h.StateString("hookKey"), h.StateString("holder")
	if repo == "" || key == "" || holder == "" {
		return providers.Health{Detail: errRecordMissing.Error()}, nil
	}
	rec, _, err := p.store().load(ctx, repo)
	if err != nil {
		return providers.Health{}, err
	}
	if rec == nil || rec.Key != key || !rec.holds(holder) {
		return providers.Health{Detail: errRecordMissing.Error()}, nil
	}
	extra := map[string]any{"repo": rec.Repo, "hookId": rec.HookID, "holders": len(rec.Holders)}
	if rs := rec.Reconcile; rs != nil {
		extra["reconcile"] = map[string]any{
			"lastRun": rs.LastRun, "checked": rs.Checked, "failed": rs.Failed,
			"redelivered": rs.Redelivered, "totalRedelivered": rs.TotalRedelivered, "lastError": rs.LastError,
			"unrecoverable": rs.Unrecoverable, "totalUnrecoverable": rs.TotalUnrecoverable,
		}
	}
	health := providers.Health{Extra: extra}
	hook, err := p.getHook(ctx, rec.Repo, rec.HookID)
	switch {
	case isNotFound(err):
		health.Detail = "the GitHub hook was deleted — restart the daemon or re-create the sentinel to re-create it"
		return health, nil
	case err != nil:
		health.Detail = err.Error()
		return health, nil
	case hook.Active != nil && !*hook.Active:
		health.Detail = "the GitHub hook is disabled"
		return health, nil
	}
	origin := p.origin(providers.Delivery{})
	if origin == "" {
		origin = rec.Origin
	}
	if hook.Config.URL != hookURL(origin, rec.Key) {
		health.Detail = "the GitHub hook no longer points at this daemon — restart the daemon to re-point it"
		return health, nil
	}
	health.OK = true
	health.Detail = "hook " + h.RemoteID + " on " + rec.Repo + " is active"
	return health, nil
}
