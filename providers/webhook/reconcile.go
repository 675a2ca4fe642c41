package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/github"
)

// maxAttempts bounds the redeliveries asked for one delivery guid.
const maxAttempts = 3

// reconcileState is the reconciliation memory kept in the hook record, so
// it holds across nodes and across the sentinels sharing the hook.
type reconcileState struct {
	// LastRun is when the last pass ran (ISO-8601).
	LastRun string `json:"lastRun,omitempty"`
	// Checked, Failed and Redelivered are the last pass's counts.
	Checked     int `json:"checked"`
	Failed      int `json:"failed"`
	Redelivered int `json:"redelivered"`
	// TotalRedelivered counts every redelivery asked for on this hook.
	TotalRedelivered int `json:"totalRedelivered"`
	// LastError is the last pass's failure, if any.
	LastError string `json:"lastError,omitempty"`
	// Asked maps a delivery guid to what was asked for it.
	Asked map[string]asked `json:"asked,omitempty"`
	// Unrecoverable counts the failed deliveries the last pass found past
	// recovery: older than GitHub's redelivery horizon, or still failing
	// after maxAttempts redeliveries. TotalUnrecoverable counts every one
	// ever reported on this hook.
	Unrecoverable      int `json:"unrecoverable"`
	TotalUnrecoverable int `json:"totalUnrecoverable"`
	// Lost maps the guid of each delivery reported unrecoverable to when it
	// was delivered (ms), so each is reported once; kept lostKeep, at most
	// maxLost of them.
	Lost map[string]int64 `json:"lost,omitempty"`
}

// Bounds of the unrecoverable deliveries remembered.
const (
	lostKeep = 30 * 24 * time.Hour
	maxLost  = 200
)

// asked records the redeliveries requested for one guid.
type asked struct {
	// Delivery is the delivery id whose redelivery GitHub last accepted.
	Delivery int64 `json:"delivery"`
	// Attempts counts the requests, accepted or not.
	Attempts int `json:"attempts"`
	// At is when the guid was first delivered (ms), for pruning.
	At int64 `json:"at"`
}

// Reconcile lists the hook's recent deliveries and asks GitHub to redeliver
// those that failed within its 3-day horizon and were not since delivered
// successfully (a later delivery with the same guid). What was asked is
// remembered in the hook record, so no pass asks twice for the same
// delivery and one guid is retried at most three times. A failed delivery
// older than the horizon (GitHub refuses to redeliver it) or still failing
// after three redeliveries is not asked for again: it is reported as
// unrecoverable, once (a warning naming its guid, the Unrecoverable
// count of the result and of the hook's status). One hook is
// reconciled at most once per ReconcileEvery however many sentinels share
// it; a throttled call returns the last pass's counts.
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
			rs = &reconcileState{}
		}
		if last, err := time.Parse(time.RFC3339Nano, rs.LastRun); err == nil && now.Sub(last) < p.cfg.ReconcileEvery && now.Sub(last) >= 0 {
			res = providers.ReconcileResult{Checked: rs.Checked, Failed: rs.Failed, Redelivered: rs.Redelivered, Unrecoverable: rs.Unrecoverable}
			return nil
		}
		passErr := p.reconcilePass(ctx, rec, rs, now)
		res = providers.ReconcileResult{Checked: rs.Checked, Failed: rs.Failed, Redelivered: rs.Redelivered, Unrecoverable: rs.Unrecoverable}
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

// reconcilePass does one pass and updates rs.
func (p *Provider) reconcilePass(ctx context.Context, rec *hookRecord, rs *reconcileState, now time.Time) error {
	path := hookPath(rec.Repo, rec.HookID) + "/deliveries?per_page=100"
	_, _, body, err := p.cfg.Runner.API(ctx, http.MethodGet, path, nil)
	if err != nil {
		return fmt.Errorf("list deliveries of hook %d of %s: %w", rec.HookID, rec.Repo, err)
	}
	var list []github.HookDelivery
	if err := json.Unmarshal(body, &list); err != nil {
		return fmt.Errorf("list deliveries of hook %d of %s: bad answer: %w", rec.HookID, rec.Repo, err)
	}
	if rs.Asked == nil {
		rs.Asked = map[string]asked{}
	}
	rs.Checked, rs.Failed, rs.Redelivered, rs.Unrecoverable = len(list), 0, 0, 0
	redeliver, expired := github.FailedDeliveries(list, now)
	for _, d := range expired {
		rs.Failed++
		p.lost(rec, rs, d, "older than GitHub's redelivery horizon (3 days)")
	}
	var errs []error
	for _, d := range redeliver {
		rs.Failed++
		a, seen := rs.Asked[d.GUID]
		if seen && a.Attempts >= maxAttempts && a.Delivery != d.ID {
			p.lost(rec, rs, d, fmt.Sprintf("still failing after %d redeliveries", maxAttempts))
			continue
		}
		if seen && a.Delivery == d.ID {
			continue
		}
		if rs.Redelivered >= p.cfg.MaxRedeliveries {
			continue
		}
		at, _ := time.Parse(time.RFC3339, d.DeliveredAt)
		if !seen {
			a.At = at.UnixMilli()
		}
		a.Attempts++
		rs.Asked[d.GUID] = a
		attempt := hookPath(rec.Repo, rec.HookID) + "/deliveries/" + strconv.FormatInt(d.ID, 10) + "/attempts"
		if _, _, _, err := p.cfg.Runner.API(ctx, http.MethodPost, attempt, nil); err != nil {
			errs = append(errs, err)
			p.cfg.Log.Warn("webhook redelivery request failed", "repo", rec.Repo, "hookId", rec.HookID, "delivery", d.ID, "err", err)
			continue
		}
		a.Delivery = d.ID
		rs.Asked[d.GUID] = a
		rs.Redelivered++
		rs.TotalRedelivered++
		p.cfg.Log.Info("webhook redelivery requested", "repo", rec.Repo, "hookId", rec.HookID, "delivery", d.ID, "guid", d.GUID, "event", d.Event)
	}
	horizon := now.Add(-github.RedeliveryHorizon).UnixMilli()
	for g, a := range rs.Asked {
		if a.At < horizon {
			delete(rs.Asked, g)
		}
	}
	pruneLost(rs, now)
	if len(errs) > 0 {
		return fmt.Errorf("%d of the redelivery requests failed, first: %w", len(errs), errs[0])
	}
	return nil
}

// lost reports a failed delivery past recovery, once per guid.
func (p *Provider) lost(rec *hookRecord, rs *reconcileState, d github.HookDelivery, why string) {
	if _, reported := rs.Lost[d.GUID]; reported {
		return
	}
	if rs.Lost == nil {
		rs.Lost = map[string]int64{}
	}
	at, _ := time.Parse(time.RFC3339, d.DeliveredAt)
	rs.Lost[d.GUID] = at.UnixMilli()
	rs.Unrecoverable++
	rs.TotalUnrecoverable++
	p.cfg.Log.Warn("webhook delivery unrecoverable: not asked for again", "repo", rec.Repo, "hookId", rec.HookID,
		"delivery", d.ID, "guid", d.GUID, "event", d.Event, "deliveredAt", d.DeliveredAt, "why", why)
}

// pruneLost forgets reported deliveries older than lostKeep, and the
// oldest past maxLost.
func pruneLost(rs *reconcileState, now time.Time) {
	cut := now.Add(-lostKeep).UnixMilli()
	for g, at := range rs.Lost {
		if at < cut {
			delete(rs.Lost, g)
		}
	}
	for len(rs.Lost) > maxLost {
		oldest, at := "", int64(0)
		for g, a := range rs.Lost {
			if oldest == "" || a < at {
				oldest, at = g, a
			}
		}
		delete(rs.Lost, oldest)
	}
	if len(rs.Lost) == 0 {
		rs.Lost = nil
	}
}
