package githubapp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/github"
)

// reconcileKey is the store key of the App webhook's reconciliation
// state, shared by every node and every sentinel of the App.
const reconcileKey = keyPrefix + "reconcile"

// Reconcile reads the App's delivery log (GET /app/hook/deliveries, App
// JWT), newest first through GitHub's cursor back to its 3-day redelivery
// horizon, and asks GitHub to redeliver those that failed within it and
// were not since delivered successfully, each guid at most three times;
// older ones and those still failing are reported once as unrecoverable
// (github.Reconciliation). The App's webhook is reconciled at most once per
// ReconcileEvery however many sentinels and nodes ask: a throttled call
// returns the last pass's counts. The state is kept in the store under
// compare-and-set, so two nodes never both run a pass.
func (p *Provider) Reconcile(ctx context.Context, _ sentinel.Handle) (providers.ReconcileResult, error) {
	raw, rev, err := p.cfg.Store.Get(ctx, reconcileKey)
	if err != nil && !errors.Is(err, sentinel.ErrNotFound) {
		return providers.ReconcileResult{}, fmt.Errorf("github-app reconcile state: %w", err)
	}
	var rs github.Reconciliation
	if len(raw) > 0 && json.Unmarshal(raw, &rs) != nil {
		rs = github.Reconciliation{}
	}
	now := p.cfg.Now()
	if !rs.Due(now, p.cfg.ReconcileEvery) {
		return rs.Result(), nil
	}
	// Claim the pass first: a node losing the compare-and-set leaves it to
	// the winner.
	rs.LastRun = sentinel.FormatTime(now)
	if rev, err = p.saveState(ctx, rs, rev); err != nil {
		if errors.Is(err, sentinel.ErrConflict) {
			return rs.Result(), nil
		}
		return providers.ReconcileResult{}, err
	}
	passErr := p.reconcilePass(ctx, &rs, now)
	rs.LastError = ""
	if passErr != nil {
		rs.LastError = passErr.Error()
	}
	if _, err := p.saveState(ctx, rs, rev); err != nil && !errors.Is(err, sentinel.ErrConflict) {
		return rs.Result(), err
	}
	return rs.Result(), passErr
}

func (p *Provider) saveState(ctx context.Context, rs github.Reconciliation, rev uint64) (uint64, error) {
	raw, err := json.Marshal(rs)
	if err != nil {
		return 0, fmt.Errorf("github-app reconcile state: %w", err)
	}
	if rev == 0 {
		return p.cfg.Store.Create(ctx, reconcileKey, raw)
	}
	return p.cfg.Store.Update(ctx, reconcileKey, raw, rev)
}

// reconcilePass does one pass and updates rs.
func (p *Provider) reconcilePass(ctx context.Context, rs *github.Reconciliation, now time.Time) error {
	a, _, err := p.appAuth(ctx)
	if err != nil {
		return err
	}
	err = rs.Pass(ctx, github.RedeliveryLog{
		Caller: a.AppClient(), Path: "app/hook/deliveries", Max: p.cfg.MaxRedeliveries, Log: p.cfg.Log, Name: "github-app",
	}, now)
	if err != nil {
		return fmt.Errorf("github-app: the App's deliveries: %w", err)
	}
	return nil
}
