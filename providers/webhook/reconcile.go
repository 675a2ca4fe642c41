package webhook

import (
	"context"
	"fmt"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/github"
)

// Reconcile reads the hook's delivery log and asks GitHub to redeliver
// those that failed within its 3-day horizon and were not since delivered
// successfully (a later delivery with the same guid): github.Reconciliation.
// The log is read newest first through GitHub's cursor back to the
// horizon, at most 30 pages of 100; a pass that left nothing to ask for
// remembers the newest delivery it read, and the next reads only down to
// it. What was asked is remembered in the hook record, so no pass asks
// twice for the same delivery and one guid is retried at most three
// times. A failed delivery older than the horizon (GitHub refuses to
// redeliver it) or still failing after three redeliveries is not asked
// for again: it is reported as unrecoverable, once (a warning naming its
// guid, the Unrecoverable count of the result and of the hook's status).
// One hook is reconciled at most once per ReconcileEvery however many
// sentinels share it; a throttled call returns the last pass's counts.
func (p *Provider) Reconcile(ctx context.Context, h sentinel.Handle) (providers.ReconcileResult, error) {
	repo, key := h.StateString("repo"), h.StateString("hookKey")
	if repo == "" || key == "" {
		return providers.ReconcileResult{}, nil
	}
	var res providers.ReconcileResult
	err := p.withRepoLock(ctx, repo, func() error {
		st := p.store()
		rec, rev, err := st.load(ctx, repo)
		if err != nil {
			return err
		}
		if rec == nil || rec.Key != key {
			return errRecordMissing
		}
		now := p.cfg.Now()
		rs := rec.Reconcile
		if rs == nil {
			rs = &github.Reconciliation{}
		}
		if !rs.Due(now, p.cfg.ReconcileEvery) {
			res = rs.Result()
			return nil
		}
		passErr := rs.Pass(ctx, github.RedeliveryLog{
			Caller: p.cfg.Runner, Path: hookPath(rec.Repo, rec.HookID) + "/deliveries", Max: p.cfg.MaxRedeliveries,
			Log: p.cfg.Log.With("repo", rec.Repo, "hookId", rec.HookID), Name: "webhook",
		}, now)
		if passErr != nil {
			passErr = fmt.Errorf("hook %d of %s: %w", rec.HookID, rec.Repo, passErr)
		}
		res = rs.Result()
		rs.LastRun = sentinel.FormatTime(now)
		rs.LastError = ""
		if passErr != nil {
			rs.LastError = passErr.Error()
		}
		rec.Reconcile = rs
		if _, err := st.save(ctx, rec, rev); err != nil {
			return err
		}
		return passErr
	})
	return res, err
}
