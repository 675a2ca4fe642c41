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
	store         *Store
	registry      *providers.Registry
	log           *slog.Logger
	now           func() time.Time
	cancelTimeout time.Duration
	// tombstones, when set, records a failed cancel for retry, and takes
	// the cancels of Sweep (see there).
	tombstones *Tombstones
}

// ExpirerOption sets one of an Expirer's optional settings.
type ExpirerOption func(*Expirer)

// WithExpirerLogger logs through l (discarded by default).
func WithExpirerLogger(l *slog.Logger) ExpirerOption { return func(e *Expirer) { e.log = l } }

// WithExpirerClock reads the time from now (time.Now by default).
func WithExpirerClock(now func() time.Time) ExpirerOption { return func(e *Expirer) { e.now = now } }

// WithCancelTimeout bounds one provider cancel (DefaultCancelTimeout by
// default).
func WithCancelTimeout(d time.Duration) ExpirerOption {
	return func(e *Expirer) { e.cancelTimeout = d }
}

// WithTombstones records a failed cancel in t for retry, and has Sweep
// queue its cancels there.
func WithTombstones(t *Tombstones) ExpirerOption { return func(e *Expirer) { e.tombstones = t } }

// NewExpirer returns an expirer of store's records, cancelling through the
// providers of registry, with opts applied.
func NewExpirer(store *Store, registry *providers.Registry, opts ...ExpirerOption) *Expirer {
	e := &Expirer{store: store, registry: registry}
	for _, o := range opts {
		o(e)
	}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	if e.now == nil {
		e.now = time.Now
	}
	return e
}

// Tombstones are the expirer's failed and queued cancels (nil without
// WithTombstones).
func (e *Expirer) Tombstones() *Tombstones { return e.tombstones }

// Expire sets the sentinel's status to expired (when it is pollable) and
// cancels its provider (waiting up to the cancel timeout). An unknown id is not
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
	rec, err := e.store.Update(ctx, id, func(r *sentinel.Sentinel) error {
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
		e.log.Info("sentinel expired", "sentinel", id, "reason", reason)
	}
	return rec, changed, nil
}

// CancelProvider cancels the record's provider-side watch, best effort: a
// failure is logged and never returned.
func (e *Expirer) CancelProvider(ctx context.Context, rec *sentinel.Sentinel) {
	prov, ok := e.registry.Get(rec.Provider)
	if !ok {
		return
	}
	timeout := e.cancelTimeout
	if timeout <= 0 {
		timeout = DefaultCancelTimeout
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	if err := prov.Cancel(cctx, rec.Handle); err != nil {
		e.log.Warn("provider cancel failed; will retry", "sentinel", rec.ID, "provider", rec.Provider, "err", err)
		if e.tombstones != nil {
			if terr := e.tombstones.Add(context.WithoutCancel(ctx), rec.ID, rec.Provider, rec.Handle, err); terr != nil {
				e.log.Warn("recording the failed cancel failed", "sentinel", rec.ID, "err", terr)
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
	now := e.now().UnixMilli()
	// A scan without copies: a tick sweeps every record, and nearly none
	// has expired.
	due, err := e.store.Select(ctx, func(r *sentinel.Sentinel) bool { return r.Status.Pollable() && r.ExpiredAt(now) })
	if err != nil {
		return 0, err
	}
	n := 0
	for _, id := range due {
		rec, changed, err := e.markExpired(ctx, id, "until.at passed")
		if err != nil {
			e.log.Warn("expiry failed", "sentinel", id, "err", err)
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
	if e.tombstones != nil {
		if _, ok := e.registry.Get(rec.Provider); !ok {
			return
		}
		qctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		err := e.tombstones.Queue(qctx, rec.ID, rec.Provider, rec.Handle)
		cancel()
		if err == nil {
			return
		}
		e.log.Warn("queueing the provider cancel failed; cancelling now", "sentinel", rec.ID, "err", err)
	}
	e.CancelProvider(ctx, rec)
}
