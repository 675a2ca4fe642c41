package githubapp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/github"
)

// reconcileKey is the store key of the App webhook's reconciliation
// state, shared by every node and every sentinel of the App.
const reconcileKey = keyPrefix + "reconcile"

// maxAttempts bounds the redeliveries asked for one delivery guid.
const maxAttempts = 3

// reconcileState is the reconciliation memory of the App's webhook.
type reconcileState struct {
	LastRun          string           `json:"lastRun,omitempty"`
	Checked          int              `json:"checked"`
	Failed           int              `json:"failed"`
	Redelivered      int              `json:"redelivered"`
	Unrecoverable    int              `json:"unrecoverable"`
	TotalRedelivered int              `json:"totalRedelivered"`
	LastError        string           `json:"lastError,omitempty"`
	Asked            map[string]asked `json:"asked,omitempty"`
	// Through is the newest delivery id of the last pass that read the
	// log back to the horizon (or to the Through before it) and left
	// nothing to ask for: the next pass reads only the pages above it.
	Through int64 `json:"through,omitempty"`
	// Lost are the guids reported unrecoverable (once each), with when
	// they were delivered (ms).
	Lost map[string]int64 `json:"lost,omitempty"`
}

// asked records the redeliveries requested for one guid.
type asked struct {
	Delivery int64 `json:"delivery"`
	Attempts int   `json:"attempts"`
	At       int64 `json:"at"`
}

func (r reconcileState) result() providers.ReconcileResult {
	return providers.ReconcileResult{Checked: r.Checked, Failed: r.Failed, Redelivered: r.Redelivered, Unrecoverable: r.Unrecoverable}
}

// Reconcile lists the App's recent deliveries (GET /app/hook/deliveries,
// App JWT) and asks GitHub to redeliver those that failed within its
// 3-day horizon and were not since delivered successfully, each guid at
// most three times; older ones and those still failing are reported once
// as unrecoverable. The App's webhook is reconciled at most once per
// ReconcileEvery however many sentinels and nodes ask: a throttled call
// returns the last pass's counts. The state is kept in the store under
// compare-and-set, so two nodes never both run a pass.
func (p *Provider) Reconcile(ctx context.Context, _ sentinel.Handle) (providers.ReconcileResult, error) {
	raw, rev, err := p.cfg.Store.Get(ctx, reconcileKey)
	if err != nil && !errors.Is(err, sentinel.ErrNotFound) {
		return providers.ReconcileResult{}, fmt.Errorf("github-app reconcile state: %w", err)
	}
	var rs reconcileState
	if len(raw) > 0 && json.Unmarshal(raw, &rs) != nil {
		rs = reconcileState{}
	}
	now := p.cfg.Now()
	if last, err := time.Parse(time.RFC3339Nano, rs.LastRun); err == nil && now.Sub(last) >= 0 && now.Sub(last) < p.cfg.ReconcileEvery {
		return rs.result(), nil
	}
	// Claim the pass first: a node losing the compare-and-set leaves it to
	// the winner.
	rs.LastRun = sentinel.FormatTime(now)
	if rev, err = p.saveState(ctx, rs, rev); err != nil {
		if errors.Is(err, sentinel.ErrConflict) {
			return rs.result(), nil
		}
		return providers.ReconcileResult{}, err
	}
	passErr := p.reconcilePass(ctx, &rs, now)
	rs.LastError = ""
	if passErr != nil {
		rs.LastError = passErr.Error()
	}
	if _, err := p.saveState(ctx, rs, rev); err != nil && !errors.Is(err, sentinel.ErrConflict) {
		return rs.result(), err
	}
	return rs.result(), passErr
}

func (p *Provider) saveState(ctx context.Context, rs reconcileState, rev uint64) (uint64, error) {
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
func (p *Provider) reconcilePass(ctx context.Context, rs *reconcileState, now time.Time) error {
	a, _, err := p.appAuth(ctx)
	if err != nil {
		return err
	}
	log, err := github.ReadDeliveries(ctx, a.AppClient(), "app/hook/deliveries", rs.Through, now)
	if err != nil {
		return fmt.Errorf("github-app: list the App's deliveries: %w", err)
	}
	list := log.Deliveries
	settled := log.Complete // nothing left to ask for below what this pass read
	if rs.Asked == nil {
		rs.Asked = map[string]asked{}
	}
	rs.Checked, rs.Failed, rs.Redelivered, rs.Unrecoverable = len(list), 0, 0, 0
	redeliver, expired := github.FailedDeliveries(list, now)
	for _, d := range expired {
		rs.Failed++
		p.lost(rs, d, "older than GitHub's redelivery horizon (3 days)")
	}
	var errs []error
	for _, d := range redeliver {
		rs.Failed++
		at, seen := rs.Asked[d.GUID]
		switch {
		case seen && at.Delivery == d.ID:
			continue // asked already; GitHub has not redelivered yet
		case seen && at.Attempts >= maxAttempts:
			p.lost(rs, d, fmt.Sprintf("still failing after %d redeliveries", maxAttempts))
			continue
		case rs.Redelivered >= p.cfg.MaxRedeliveries:
			settled = false
			continue
		}
		if !seen {
			t, _ := time.Parse(time.RFC3339, d.DeliveredAt)
			at.At = t.UnixMilli()
		}
		at.Attempts++
		rs.Asked[d.GUID] = at
		path := "app/hook/deliveries/" + strconv.FormatInt(d.ID, 10) + "/attempts"
		if _, _, _, err := a.AppClient().API(ctx, http.MethodPost, path, nil); err != nil {
			errs = append(errs, err)
			p.cfg.Log.Warn("github-app redelivery request failed", "delivery", d.ID, "err", err)
			continue
		}
		at.Delivery = d.ID
		rs.Asked[d.GUID] = at
		rs.Redelivered++
		rs.TotalRedelivered++
		p.cfg.Log.Info("github-app redelivery requested", "delivery", d.ID, "guid", d.GUID, "event", d.Event)
	}
	horizon := now.Add(-github.RedeliveryHorizon).UnixMilli()
	for g, at := range rs.Asked {
		if at.At < horizon {
			delete(rs.Asked, g)
		}
	}
	for g, at := range rs.Lost {
		if at < horizon-int64(30*24*time.Hour/time.Millisecond) {
			delete(rs.Lost, g)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%d of the redelivery requests failed, first: %w", len(errs), errs[0])
	}
	if settled {
		rs.Through = max(rs.Through, log.Newest())
	}
	return nil
}

// lost reports a failed delivery past recovery, once per guid.
func (p *Provider) lost(rs *reconcileState, d github.HookDelivery, why string) {
	if _, reported := rs.Lost[d.GUID]; reported {
		return
	}
	if rs.Lost == nil {
		rs.Lost = map[string]int64{}
	}
	at, _ := time.Parse(time.RFC3339, d.DeliveredAt)
	rs.Lost[d.GUID] = at.UnixMilli()
	rs.Unrecoverable++
	p.cfg.Log.Warn("github-app delivery unrecoverable: not asked for again", "delivery", d.ID, "guid", d.GUID, "event", d.Event, "why", why)
}
