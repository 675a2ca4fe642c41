package github

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/agentproto/sentinel/providers"
)

// MaxRedeliveryAttempts bounds the redeliveries asked for one delivery
// guid.
const MaxRedeliveryAttempts = 3

// Bounds of the unrecoverable deliveries a Reconciliation remembers.
const (
	lostKeep = 30 * 24 * time.Hour
	maxLost  = 200
)

// Reconciliation is the memory of the reconciliation of one delivery log
// (a repository hook's, the App's), kept by its provider in its store so
// it holds across nodes and passes.
type Reconciliation struct {
	// LastRun is when the last pass ran (ISO-8601); LastError its failure,
	// if any. The provider sets both.
	LastRun   string `json:"lastRun,omitempty"`
	LastError string `json:"lastError,omitempty"`
	// Checked, Failed, Redelivered and Unrecoverable are the last pass's
	// counts: deliveries read, failed ones found, redeliveries asked,
	// failures reported past recovery.
	Checked       int `json:"checked"`
	Failed        int `json:"failed"`
	Redelivered   int `json:"redelivered"`
	Unrecoverable int `json:"unrecoverable"`
	// TotalRedelivered and TotalUnrecoverable count every redelivery asked
	// and every failure reported unrecoverable on this log.
	TotalRedelivered   int `json:"totalRedelivered"`
	TotalUnrecoverable int `json:"totalUnrecoverable"`
	// Asked maps a delivery guid to what was asked for it.
	Asked map[string]Asked `json:"asked,omitempty"`
	// Through is the newest delivery id of the last pass that read the
	// log back to the horizon (or to the Through before it) and left
	// nothing to ask for: the next pass reads only the pages above it.
	Through int64 `json:"through,omitempty"`
	// Lost maps the guid of each delivery reported unrecoverable to when it
	// was delivered (ms), so each is reported once; kept 30 days, at most
	// 200 of them.
	Lost map[string]int64 `json:"lost,omitempty"`
}

// Asked records the redeliveries requested for one guid.
type Asked struct {
	// Delivery is the delivery id whose redelivery GitHub last accepted.
	Delivery int64 `json:"delivery"`
	// Attempts counts the requests, accepted or not.
	Attempts int `json:"attempts"`
	// At is when the guid was first delivered (ms), for pruning.
	At int64 `json:"at"`
}

// Result is the last pass's counts.
func (r *Reconciliation) Result() providers.ReconcileResult {
	return providers.ReconcileResult{Checked: r.Checked, Failed: r.Failed, Redelivered: r.Redelivered, Unrecoverable: r.Unrecoverable}
}

// Due reports whether a pass may run at now: none ran in the last every.
func (r *Reconciliation) Due(now time.Time, every time.Duration) bool {
	last, err := time.Parse(time.RFC3339Nano, r.LastRun)
	return err != nil || now.Sub(last) < 0 || now.Sub(last) >= every
}

// RedeliveryLog is the delivery log one pass reconciles.
type RedeliveryLog struct {
	// Caller makes the REST calls.
	Caller APICaller
	// Path is the log's path (repos/{o}/{r}/hooks/{id}/deliveries,
	// app/hook/deliveries); a redelivery is POST Path/{id}/attempts.
	Path string
	// Max caps the redeliveries one pass asks for.
	Max int
	// Log receives a line per redelivery asked, refused or given up,
	// each message prefixed with Name ("webhook", "github-app"); its
	// attributes name the hook.
	Log  *slog.Logger
	Name string
}

// Pass does one reconciliation pass over l at now and updates r: it reads
// the log newest first through GitHub's cursor (ReadDeliveries, down to
// r.Through), asks GitHub to redeliver each guid whose latest delivery
// failed within RedeliveryHorizon and was not since delivered
// successfully, at most MaxRedeliveryAttempts times a guid and l.Max a
// pass, never twice for the same delivery, and reports once as
// unrecoverable a failure older than the horizon or still failing after
// the last attempt. A pass that read back to the horizon, the log's end or
// r.Through, asked for everything it found and had no request refused
// moves r.Through up to the newest delivery it read.
func (r *Reconciliation) Pass(ctx context.Context, l RedeliveryLog, now time.Time) error {
	read, err := ReadDeliveries(ctx, l.Caller, l.Path, r.Through, now)
	if err != nil {
		return fmt.Errorf("list deliveries: %w", err)
	}
	settled := read.Complete
	if r.Asked == nil {
		r.Asked = map[string]Asked{}
	}
	r.Checked, r.Failed, r.Redelivered, r.Unrecoverable = len(read.Deliveries), 0, 0, 0
	redeliver, expired := FailedDeliveries(read.Deliveries, now)
	for _, d := range expired {
		r.Failed++
		r.lost(l, d, "older than GitHub's redelivery horizon (3 days)")
	}
	var errs []error
	for _, d := range redeliver {
		r.Failed++
		a, seen := r.Asked[d.GUID]
		switch {
		case seen && a.Delivery == d.ID:
			continue // asked already; GitHub has not listed the redelivery yet
		case seen && a.Attempts >= MaxRedeliveryAttempts:
			r.lost(l, d, fmt.Sprintf("still failing after %d redeliveries", MaxRedeliveryAttempts))
			continue
		case r.Redelivered >= l.Max:
			settled = false
			continue
		}
		if !seen {
			at, _ := time.Parse(time.RFC3339, d.DeliveredAt)
			a.At = at.UnixMilli()
		}
		a.Attempts++
		r.Asked[d.GUID] = a
		attempt := l.Path + "/" + strconv.FormatInt(d.ID, 10) + "/attempts"
		if _, _, _, err := l.Caller.API(ctx, http.MethodPost, attempt, nil); err != nil {
			errs = append(errs, err)
			l.Log.Warn(l.Name+" redelivery request failed", "delivery", d.ID, "err", err)
			continue
		}
		a.Delivery = d.ID
		r.Asked[d.GUID] = a
		r.Redelivered++
		r.TotalRedelivered++
		l.Log.Info(l.Name+" redelivery requested", "delivery", d.ID, "guid", d.GUID, "event", d.Event)
	}
	horizon := now.Add(-RedeliveryHorizon).UnixMilli()
	for g, a := range r.Asked {
		if a.At < horizon {
			delete(r.Asked, g)
		}
	}
	r.pruneLost(now)
	if len(errs) > 0 {
		return fmt.Errorf("%d of the redelivery requests failed, first: %w", len(errs), errs[0])
	}
	if settled {
		r.Through = max(r.Through, read.Newest())
	}
	return nil
}

// lost reports a failed delivery past recovery, once per guid.
func (r *Reconciliation) lost(l RedeliveryLog, d HookDelivery, why string) {
	if _, reported := r.Lost[d.GUID]; reported {
		return
	}
	if r.Lost == nil {
		r.Lost = map[string]int64{}
	}
	at, _ := time.Parse(time.RFC3339, d.DeliveredAt)
	r.Lost[d.GUID] = at.UnixMilli()
	r.Unrecoverable++
	r.TotalUnrecoverable++
	l.Log.Warn(l.Name+" delivery unrecoverable: not asked for again",
		"delivery", d.ID, "guid", d.GUID, "event", d.Event, "deliveredAt", d.DeliveredAt, "why", why)
}

// pruneLost forgets reported deliveries older than lostKeep, and the
// oldest past maxLost.
func (r *Reconciliation) pruneLost(now time.Time) {
	cut := now.Add(-lostKeep).UnixMilli()
	for g, at := range r.Lost {
		if at < cut {
			delete(r.Lost, g)
		}
	}
	for len(r.Lost) > maxLost {
		oldest, at := "", int64(0)
		for g, a := range r.Lost {
			if oldest == "" || a < at {
				oldest, at = g, a
			}
		}
		delete(r.Lost, oldest)
	}
	if len(r.Lost) == 0 {
		r.Lost = nil
	}
}
