package sentinels

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
)

// Tombstone backoff: a failed provider cancel is retried after
// TombstoneBase, doubling per attempt up to TombstoneMax.
const (
	TombstoneBase = 30 * time.Second
	TombstoneMax  = time.Hour
)

// Tombstone is a provider-side watch whose cancel failed: the sentinel is
// gone (removed or expired) but its remote resource may still exist.
type Tombstone struct {
	Provider  string          `json:"provider"`
	Handle    sentinel.Handle `json:"handle"`
	Attempts  int             `json:"attempts"`
	NextAtMs  int64           `json:"nextAtMs"`
	LastError string          `json:"lastError"`
	CreatedTs int64           `json:"createdTs"`
}

// Tombstones keeps failed cancels in a KV bucket (keyed by provider and
// remote id) and retries them with backoff, so an unreachable remote is not
// leaked silently. Handles are stored as the sentinel records store them
// (inside the 0700 JetStream folder).
type Tombstones struct {
	kv  jetstream.KeyValue
	now func() time.Time
	log *slog.Logger
}

// NewTombstones returns the store.
func NewTombstones(kv jetstream.KeyValue, now func() time.Time, log *slog.Logger) *Tombstones {
	return &Tombstones{kv: kv, now: now, log: log}
}

func tombstoneKey(provider string, h sentinel.Handle) string {
	sum := sha256.Sum256([]byte(provider + "|" + h.RemoteID + "|" + providers.HookKeyOf(h) + "|" + h.StateString("holder")))
	return hex.EncodeToString(sum[:16])
}

// Add records a failed cancel (idempotent per provider and remote).
func (t *Tombstones) Add(ctx context.Context, provider string, h sentinel.Handle, cause error) error {
	now := t.now()
	ts := Tombstone{Provider: provider, Handle: h, Attempts: 1, NextAtMs: now.Add(TombstoneBase).UnixMilli(), LastError: truncate(cause.Error(), 500), CreatedTs: now.UnixMilli()}
	raw, err := json.Marshal(ts)
	if err != nil {
		return err
	}
	if _, err := t.kv.Put(ctx, tombstoneKey(provider, h), raw); err != nil {
		return fmt.Errorf("record cancel tombstone: %w", err)
	}
	return nil
}

// List returns every tombstone.
func (t *Tombstones) List(ctx context.Context) ([]Tombstone, error) {
	lister, err := t.kv.ListKeys(ctx)
	if errors.Is(err, jetstream.ErrNoKeysFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list tombstones: %w", err)
	}
	var out []Tombstone
	for k := range lister.Keys() {
		e, err := t.kv.Get(ctx, k)
		if err != nil {
			continue
		}
		var ts Tombstone
		if json.Unmarshal(e.Value(), &ts) == nil {
			out = append(out, ts)
		}
	}
	return out, nil
}

// Sweep retries the due cancels: a success (or a remote that a live
// sentinel owns again) drops the tombstone; a failure backs it off.
func (t *Tombstones) Sweep(ctx context.Context, reg *providers.Registry, live []*sentinel.Sentinel) {
	lister, err := t.kv.ListKeys(ctx)
	if err != nil {
		if !errors.Is(err, jetstream.ErrNoKeysFound) {
			t.log.Warn("tombstone sweep: listing failed", "err", err)
		}
		return
	}
	inUse := map[string]bool{}
	for _, r := range live {
		if r.Status.Pollable() {
			inUse[tombstoneKey(r.Provider, r.Handle)] = true
		}
	}
	now := t.now()
	for key := range lister.Keys() {
		e, err := t.kv.Get(ctx, key)
		if err != nil {
			continue
		}
		var ts Tombstone
		if json.Unmarshal(e.Value(), &ts) != nil || inUse[key] {
			_ = t.kv.Delete(ctx, key)
			continue
		}
		if ts.NextAtMs > now.UnixMilli() {
			continue
		}
		prov, ok := reg.Get(ts.Provider)
		if !ok {
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		err = prov.Cancel(cctx, ts.Handle)
		cancel()
		if err == nil {
			t.log.Info("cancelled a provider watch on retry", "provider", ts.Provider, "attempts", ts.Attempts+1)
			_ = t.kv.Delete(ctx, key, jetstream.LastRevision(e.Revision()))
			continue
		}
		ts.Attempts++
		wait := TombstoneBase << min(ts.Attempts-1, 10)
		ts.NextAtMs = now.Add(min(wait, TombstoneMax)).UnixMilli()
		ts.LastError = truncate(err.Error(), 500)
		raw, _ := json.Marshal(ts)
		_, _ = t.kv.Update(ctx, key, raw, e.Revision())
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
