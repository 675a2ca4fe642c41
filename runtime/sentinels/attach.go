package sentinels

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
)

// Reattach re-attaches every active or orphaned sentinel at start-up. An
// unknown provider or a failing attach marks the sentinel error with
// lastError; nothing here fails start-up. It reads the records without
// copying them (Store.Shared: a start visits every record, and a copy of
// each would double the mirror's memory for a moment); each provider gets
// a copy of the handle.
func (s *Service) Reattach(ctx context.Context) {
	recs, err := s.store.Shared(ctx)
	if err != nil {
		s.log.Error("re-attach: listing sentinels failed", "err", err)
		return
	}
	for _, rec := range recs {
		if !rec.Status.Pollable() {
			continue
		}
		prov, ok := s.registry.Get(rec.Provider)
		if !ok {
			s.markError(ctx, rec.ID, fmt.Sprintf("unknown sentinel provider %q", rec.Provider))
			continue
		}
		pctx, cancel := s.providerCtx(ctx)
		d := providers.PreferredDelivery(pctx, prov, s.activeMs(), s.publicURL().URL)
		h, err := prov.Attach(pctx, HandleCopy(rec.Handle), d)
		cancel()
		if err != nil {
			s.markError(ctx, rec.ID, "attach failed: "+err.Error())
			continue
		}
		if !sameHandle(h, rec.Handle) {
			if _, err := s.store.Update(ctx, rec.ID, func(r *sentinel.Sentinel) error {
				// Another node may have polled since the snapshot: its
				// cursor stands (the cursor never goes backwards).
				if r.Handle.Cursor != rec.Handle.Cursor {
					h.Cursor = r.Handle.Cursor
				}
				r.Handle = h
				return nil
			}); err != nil {
				s.log.Warn("re-attach: storing the handle failed", "sentinel", rec.ID, "err", err)
			}
		}
	}
}

func (s *Service) markError(ctx context.Context, id, msg string) {
	s.log.Warn("sentinel marked error", "sentinel", id, "reason", msg)
	if _, err := s.store.Update(ctx, id, func(r *sentinel.Sentinel) error {
		r.Status = sentinel.StatusError
		r.LastError = msg
		return nil
	}); err != nil && !errors.Is(err, ErrNotFound) {
		s.log.Warn("marking error failed", "sentinel", id, "err", err)
	}
}

// sameHandle reports whether two handles are the same (their states
// printing alike). The usual case, an unchanged state, is settled without
// printing (a start re-attaches every sentinel).
func sameHandle(a, b sentinel.Handle) bool {
	if a.Provider != b.Provider || a.RemoteID != b.RemoteID || a.Cursor != b.Cursor {
		return false
	}
	if maps.EqualFunc(a.State, b.State, func(x, y any) bool { return reflect.DeepEqual(x, y) }) {
		return true
	}
	return fmt.Sprint(a.State) == fmt.Sprint(b.State)
}

// ReconcileAll runs one reconciliation pass for every pollable sentinel
// whose provider can lose deliveries (providers.Reconciler). Providers
// throttle per remote resource themselves; failures are logged. Like
// Reattach it reads the records without copying them.
func (s *Service) ReconcileAll(ctx context.Context) {
	recs, err := s.store.Shared(ctx)
	if err != nil {
		s.log.Warn("reconcile: listing sentinels failed", "err", err)
		return
	}
	for _, rec := range recs {
		if !rec.Status.Pollable() {
			continue
		}
		prov, ok := s.registry.Get(rec.Provider)
		if !ok {
			continue
		}
		r, ok := prov.(providers.Reconciler)
		if !ok {
			continue
		}
		pctx, cancel := s.providerCtx(ctx)
		res, err := r.Reconcile(pctx, HandleCopy(rec.Handle))
		cancel()
		if err != nil {
			s.log.Warn("reconcile failed", "sentinel", rec.ID, "provider", rec.Provider, "err", err)
			continue
		}
		if res.Redelivered > 0 || res.Failed > 0 {
			s.log.Info("reconciled", "sentinel", rec.ID, "provider", rec.Provider, "failed", res.Failed, "redelivered", res.Redelivered, "unrecoverable", res.Unrecoverable)
		}
	}
}
