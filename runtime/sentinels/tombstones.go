package sentinels

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
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

// Cancel defaults: cancels in flight at once, and the time each may take.
const (
	DefaultCancelConcurrency = 4
	DefaultCancelTimeout     = 15 * time.Second
)

// Tombstone is a provider-side watch to cancel: the sentinel is gone
// (removed or expired) but its remote resource may still exist. Attempts
// counts the cancels that failed (0 for an expiry's cancel not yet tried).
type Tombstone struct {
	// SentinelID is the sentinel the remote belonged to ("" in tombstones
	// written before it was recorded).
	SentinelID string          `json:"sentinelId,omitempty"`
	Provider   string          `json:"provider"`
	Handle     sentinel.Handle `json:"handle"`
	Attempts   int             `json:"attempts"`
	NextAtMs   int64           `json:"nextAtMs"`
	LastError  string          `json:"lastError"`
	CreatedTs  int64           `json:"createdTs"`
}

// Tombstones keeps pending provider cancels in a KV bucket (keyed by
// provider and remote id) and runs them with backoff, so an unreachable
// remote is not leaked silently. Handles are stored as the sentinel records
// store them (inside the 0700 JetStream folder).
type Tombstones struct {
	kv  jetstream.KeyValue
	now func() time.Time
	log *slog.Logger

	// concurrency bounds the cancels in flight at once (see Slots).
	concurrency int
	// cancelTimeout bounds each cancel (DefaultCancelTimeout when 0).
	cancelTimeout time.Duration
}

// TombstonesOption configures a Tombstones.
type TombstonesOption func(*Tombstones)

// WithTombstonesClock reads the time from now (time.Now by default).
func WithTombstonesClock(now func() time.Time) TombstonesOption {
	return func(t *Tombstones) { t.now = now }
}

// WithTombstonesLogger logs through l (discarded by default).
func WithTombstonesLogger(l *slog.Logger) TombstonesOption { return func(t *Tombstones) { t.log = l } }

// WithTombstonesConcurrency bounds the cancels in flight at once
// (DefaultCancelConcurrency by default; see Slots).
func WithTombstonesConcurrency(n int) TombstonesOption {
	return func(t *Tombstones) { t.concurrency = n }
}

// WithTombstonesCancelTimeout bounds each cancel (DefaultCancelTimeout by
// default).
func WithTombstonesCancelTimeout(d time.Duration) TombstonesOption {
	return func(t *Tombstones) { t.cancelTimeout = d }
}

// NewTombstones returns the store on the bucket.
func NewTombstones(kv jetstream.KeyValue, opts ...TombstonesOption) *Tombstones {
	t := &Tombstones{kv: kv}
	for _, o := range opts {
		o(t)
	}
	if t.now == nil {
		t.now = time.Now
	}
	if t.log == nil {
		t.log = slog.New(slog.DiscardHandler)
	}
	return t
}

func tombstoneKey(provider string, h sentinel.Handle) string {
	sum := sha256.Sum256([]byte(provider + "|" + h.RemoteID + "|" + providers.HookKeyOf(h) + "|" + h.StateString("holder")))
	return hex.EncodeToString(sum[:16])
}

// Add records a failed cancel of sentinelID's remote, due after
// TombstoneBase (idempotent per provider and remote).
func (t *Tombstones) Add(ctx context.Context, sentinelID, provider string, h sentinel.Handle, cause error) error {
	now := t.now()
	return t.put(ctx, Tombstone{SentinelID: sentinelID, Provider: provider, Handle: h, Attempts: 1,
		NextAtMs: now.Add(TombstoneBase).UnixMilli(), LastError: truncate(cause.Error(), 500), CreatedTs: now.UnixMilli()})
}

// Queue records a cancel of sentinelID's remote that is due now, for the
// next sweep to run (idempotent per provider and remote).
func (t *Tombstones) Queue(ctx context.Context, sentinelID, provider string, h sentinel.Handle) error {
	now := t.now()
	return t.put(ctx, Tombstone{SentinelID: sentinelID, Provider: provider, Handle: h,
		NextAtMs: now.UnixMilli(), CreatedTs: now.UnixMilli()})
}

func (t *Tombstones) put(ctx context.Context, ts Tombstone) error {
	raw, err := json.Marshal(ts)
	if err != nil {
		return err
	}
	if _, err := t.kv.Put(ctx, tombstoneKey(ts.Provider, ts.Handle), raw); err != nil {
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

// Pending is a due cancel, as Due read it.
type Pending struct {
	// Key identifies the remote (one tombstone per provider and remote).
	Key string
	Tombstone
	rev  uint64
	prov providers.Provider
}

// Due returns the cancels to run now. Whether a remote is still in use is
// read from the records bucket itself, after the tombstones (the node's
// mirror may trail the bucket, and a tombstone just written by a removal
// must not be taken for in use and dropped):
//
//   - no pollable sentinel owns the remote: its cancel is due;
//   - only the sentinel it came from is still pollable (a removal writes the
//     tombstone before it deletes the record): it waits for a later sweep;
//   - another pollable sentinel owns it (a re-subscribe): the tombstone is
//     dropped, not executed.
//
// A tombstone of a provider this node does not run is left alone.
func (t *Tombstones) Due(ctx context.Context, reg *providers.Registry, store *Store) ([]Pending, error) {
	due, err := t.due(ctx)
	if err != nil || len(due) == 0 {
		return nil, err
	}
	live, err := store.ListFresh(ctx)
	if err != nil {
		return nil, fmt.Errorf("tombstone sweep: %w", err)
	}
	owners := map[string][]string{}
	for _, r := range live {
		if r.Status.Pollable() {
			k := tombstoneKey(r.Provider, r.Handle)
			owners[k] = append(owners[k], r.ID)
		}
	}
	out := due[:0]
	for _, p := range due {
		if ids := owners[p.Key]; len(ids) > 0 {
			if p.SentinelID != "" && !slices.ContainsFunc(ids, func(id string) bool { return id != p.SentinelID }) {
				continue // its own removal is in flight
			}
			_ = t.kv.Delete(ctx, p.Key, jetstream.LastRevision(p.rev))
			continue
		}
		prov, ok := reg.Get(p.Provider)
		if !ok {
			continue
		}
		p.prov = prov
		out = append(out, p)
	}
	return out, nil
}

// due lists the tombstones due now, dropping any that cannot be decoded.
func (t *Tombstones) due(ctx context.Context) ([]Pending, error) {
	lister, err := t.kv.ListKeys(ctx)
	if errors.Is(err, jetstream.ErrNoKeysFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list tombstones: %w", err)
	}
	now := t.now().UnixMilli()
	var out []Pending
	for key := range lister.Keys() {
		e, err := t.kv.Get(ctx, key)
		if err != nil {
			continue
		}
		var ts Tombstone
		if json.Unmarshal(e.Value(), &ts) != nil {
			_ = t.kv.Delete(ctx, key, jetstream.LastRevision(e.Revision()))
			continue
		}
		if ts.NextAtMs <= now {
			out = append(out, Pending{Key: key, Tombstone: ts, rev: e.Revision()})
		}
	}
	return out, nil
}

// Cancel runs one pending cancel within its cancel timeout and records the
// outcome (compare-and-set on the revision Due read, so a newer tombstone
// of the same remote wins): a success drops the tombstone, a failure backs
// it off. When ctx ends first (shutdown), the tombstone stays due,
// unchanged.
func (t *Tombstones) Cancel(ctx context.Context, p Pending) {
	timeout := t.cancelTimeout
	if timeout <= 0 {
		timeout = DefaultCancelTimeout
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	err := p.prov.Cancel(cctx, p.Handle)
	cancel()
	log := t.log.With("provider", p.Provider, "sentinel", p.SentinelID)
	if err == nil {
		log.Info("cancelled a provider watch", "attempts", p.Attempts+1)
		// The remote is gone: record it even when shutdown began meanwhile.
		bctx, bcancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer bcancel()
		_ = t.kv.Delete(bctx, p.Key, jetstream.LastRevision(p.rev))
		return
	}
	if ctx.Err() != nil {
		return // shutting down: the tombstone stays due
	}
	ts := p.Tombstone
	ts.Attempts++
	wait := min(TombstoneBase<<min(ts.Attempts-1, 10), TombstoneMax)
	ts.NextAtMs = t.now().Add(wait).UnixMilli()
	ts.LastError = truncate(err.Error(), 500)
	log.Warn("provider cancel failed; will retry", "attempts", ts.Attempts, "retryIn", wait.String(), "err", err)
	raw, _ := json.Marshal(ts)
	_, _ = t.kv.Update(ctx, p.Key, raw, p.rev)
}

// Sweep runs every due cancel (Due), at most Slots at a time, and returns
// once they have all returned. The poll loop's cancel worker dispatches Due
// and Cancel itself instead, so that a hanging cancel holds up nothing but
// its own slot; Sweep serves ticks outside the loop's Run.
func (t *Tombstones) Sweep(ctx context.Context, reg *providers.Registry, store *Store) {
	due, err := t.Due(ctx, reg, store)
	if err != nil {
		if ctx.Err() == nil {
			t.log.Warn("tombstone sweep failed", "err", err)
		}
		return
	}
	sem := make(chan struct{}, t.Slots())
	var wg sync.WaitGroup
	defer wg.Wait()
	for _, p := range due {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			return
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			t.Cancel(ctx, p)
		}()
	}
}

// Slots returns how many cancels may run at once
// (WithTombstonesConcurrency, or DefaultCancelConcurrency when it is not
// positive).
func (t *Tombstones) Slots() int {
	if t.concurrency <= 0 {
		return DefaultCancelConcurrency
	}
	return t.concurrency
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
