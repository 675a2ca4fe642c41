package sentinels

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
)

// Expirer moves sentinels to expired and cancels their provider-side watch,
// best effort.
type Expirer struct {
	Store         *Store
	Registry      *providers.Registry
	Log           *slog.Logger
	Now           func() time.Time
	CancelTimeout time.Duration
	// Tombstones, when set, records a failed cancel for retry, and takes
	// the cancels of Sweep (see there).
	Tombstones *Tombstones
}

// Expire sets the sentinel's status to expired (when it is pollable) and
// cancels its provider (waiting up to CancelTimeout). An unknown id is not
// an error.
func (e *Expirer) Expire(ctx context.Context, id, reason string) error {
	rec, changed, err := e.markExpired(ctx, id, reason)
	if err != nil || !changed {
		return err
	}
	e.CancelProvider(ctx, rec)
	return nil
}

// markExpired sets a pollable sentinel's status to expired; changed reports
// whether this call did.
func (e *Expirer) markExpired(ctx context.Context, id, reason string) (*sentinel.Sentinel, bool, error) {
	changed := false
	rec, err := e.Store.Update(ctx, id, func(r *sentinel.Sentinel) error {
		if !r.Status.Pollable() {
			changed = false
			return ErrSkip
		}
		changed = true
		r.Status = sentinel.StatusExpired
		return nil
	})
	if errors.Is(err, ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if changed {
		e.Log.Info("sentinel expired", "sentinel", id, "reason", reason)
	}
	return rec, changed, nil
}

// CancelProvider cancels the record's provider-side watch, best effort: a
// failure is logged and never returned.
func (e *Expirer) CancelProvider(ctx context.Context, rec *sentinel.Sentinel) {
	prov, ok := e.Registry.Get(rec.Provider)
	if !ok {
		return
	}
	timeout := e.CancelTimeout
	if timeout <= 0 {
		timeout = DefaultCancelTimeout
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	if err := prov.Cancel(cctx, rec.Handle); err != nil {
		e.Log.Warn("provider cancel failed; will retry", "sentinel", rec.ID, "provider", rec.Provider, "err", err)
		if e.Tombstones != nil {
			if terr := e.Tombstones.Add(context.WithoutCancel(ctx), rec.ID, rec.Provider, rec.Handle, err); terr != nil {
				e.Log.Warn("recording the failed cancel failed", "sentinel", rec.ID, "err", terr)
			}
		}
	}
}

// Sweep expires every pollable sentinel whose until.at has passed, so idle
// sentinels expire without events. It returns how many expired. It never
// waits for a remote: each expired sentinel's cancel is recorded as a due
// tombstone, run by the next Tombstones.Sweep (the poll loop's cancel
// worker); only without a tombstone store, or when recording one fails,
// does it cancel in place.
func (e *Expirer) Sweep(ctx context.Context) (int, error) {
	now := e.Now().UnixMilli()
	// A scan without copies: a tick sweeps every record, and nearly none
	// has expired.
	due, err := e.Store.Select(ctx, func(r *sentinel.Sentinel) bool { return r.Status.Pollable() && r.ExpiredAt(now) })
	if err != nil {
		return 0, err
	}
	n := 0
	for _, id := range due {
		rec, changed, err := e.markExpired(ctx, id, "until.at passed")
		if err != nil {
			e.Log.Warn("expiry failed", "sentinel", id, "err", err)
			continue
		}
		if !changed {
			continue
		}
		n++
		e.queueCancel(ctx, rec)
	}
	return n, nil
}

// queueCancel hands an expired sentinel's cancel to the tombstone sweep.
func (e *Expirer) queueCancel(ctx context.Context, rec *sentinel.Sentinel) {
	if e.Tombstones != nil {
		if _, ok := e.Registry.Get(rec.Provider); !ok {
			return
		}
		qctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		err := e.Tombstones.Queue(qctx, rec.ID, rec.Provider, rec.Handle)
		cancel()
		if err == nil {
			return
		}
		e.Log.Warn("queueing the provider cancel failed; cancelling now", "sentinel", rec.ID, "err", err)
	}
	e.CancelProvider(ctx, rec)
}
