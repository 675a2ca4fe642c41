package sentinels

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/runtime/pause"
)

// PointUpdate is reached (key: the sentinel id) in every compare-and-set
// attempt of an update, after the update function decided and before the
// write: a test holds a node here between its read and its write.
const PointUpdate pause.Point = "sentinels.update"

// Store keeps sentinel records in a KV bucket keyed by id. Updates are
// compare-and-set on the entry revision, retried on conflict.
type Store struct {
	kv jetstream.KeyValue
	// leaderGet, when set (a cluster: WithLeaderGet), reads a record's raw
	// value and revision through the bucket's leader; an unknown or
	// deleted key wraps sentinel.ErrNotFound. Fresh uses it.
	leaderGet func(ctx context.Context, id string) ([]byte, uint64, error)
	// pause holds the store's named pause points (tests; nil in
	// production): PointUpdate, PointMirrorApply.
	pause *pause.Points

	// mirrorCheck is how often the mirror's supervisor looks at it
	// (default 10s; mirror.go).
	mirrorCheck time.Duration

	mu    sync.RWMutex
	cache *cache // nil until StartCache
	sup   *supervisor
}

// StoreOption configures a Store.
type StoreOption func(*Store)

// WithLeaderGet gives the store a read through the records bucket's
// leader (a node with peers: BusLeaderGet), which Fresh uses instead of
// the node's mirror or replica.
func WithLeaderGet(get func(ctx context.Context, id string) ([]byte, uint64, error)) StoreOption {
	return func(s *Store) { s.leaderGet = get }
}

// WithMirrorCheck sets how often the mirror's supervisor looks at the
// mirror (default 10s).
func WithMirrorCheck(d time.Duration) StoreOption { return func(s *Store) { s.mirrorCheck = d } }

// WithStorePause sets the store's pause points (tests).
func WithStorePause(p *pause.Points) StoreOption { return func(s *Store) { s.pause = p } }

// NewStore returns a store on the bucket.
func NewStore(kv jetstream.KeyValue, opts ...StoreOption) *Store {
	s := &Store{kv: kv}
	for _, o := range opts {
		o(s)
	}
	return s
}

// leaderReads reports whether the store reads through the bucket's
// leader (a node with peers).
func (s *Store) leaderReads() bool { return s.leaderGet != nil }

// ErrNotFound is returned (wrapped) for an unknown sentinel id.
var ErrNotFound = sentinel.Errorf(sentinel.CodeSentinelNotFound, "sentinel not found")

// Create stores a new record; an existing id is sentinel.ErrConflict.
func (s *Store) Create(ctx context.Context, rec *sentinel.Sentinel) error {
	raw, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("encode sentinel %s: %w", rec.ID, err)
	}
	rev, err := s.kv.Create(ctx, rec.ID, raw)
	if err != nil {
		if errors.Is(err, jetstream.ErrKeyExists) {
			return fmt.Errorf("create sentinel %s: %w", rec.ID, sentinel.ErrConflict)
		}
		return fmt.Errorf("create sentinel %s: %w", rec.ID, err)
	}
	s.remember(rec.ID, raw, rev)
	return nil
}

// Get returns the record and its revision, or an error wrapping ErrNotFound.
func (s *Store) Get(ctx context.Context, id string) (*sentinel.Sentinel, uint64, error) {
	if !validKey(id) {
		return nil, 0, fmt.Errorf("get sentinel %q: %w", id, ErrNotFound)
	}
	e, err := s.kv.Get(ctx, id)
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		return nil, 0, fmt.Errorf("get sentinel %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("get sentinel %s: %w", id, err)
	}
	rec, err := decode(e.Value())
	if err != nil {
		return nil, 0, fmt.Errorf("decode sentinel %s: %w", id, err)
	}
	return rec, e.Revision(), nil
}

// Peek returns a record and its revision from the in-memory mirror when
// there is one (falling back to Get). The copy may trail another node's
// latest write; UpdateFrom starting from it detects that and re-reads.
func (s *Store) Peek(ctx context.Context, id string) (*sentinel.Sentinel, uint64, error) {
	if c := s.mirror(); c != nil {
		if rec, rev, ok := c.get(id); ok {
			return rec, rev, nil
		}
	}
	return s.Get(ctx, id)
}

// Fresh returns the record as the bucket's leader holds it now, when the
// store has a leader read (a cluster), else as Peek does. Decisions that
// other nodes' writes may have changed (seen, closure, status, until) are
// taken from it: a node's mirror can trail a write another node just
// made.
func (s *Store) Fresh(ctx context.Context, id string) (*sentinel.Sentinel, uint64, error) {
	if s.leaderGet == nil {
		return s.Peek(ctx, id)
	}
	if !validKey(id) {
		return nil, 0, fmt.Errorf("get sentinel %q: %w", id, ErrNotFound)
	}
	raw, rev, err := s.leaderGet(ctx, id)
	if errors.Is(err, sentinel.ErrNotFound) {
		return nil, 0, fmt.Errorf("get sentinel %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("get sentinel %s: %w", id, err)
	}
	rec, err := decode(raw)
	if err != nil {
		return nil, 0, fmt.Errorf("decode sentinel %s: %w", id, err)
	}
	return rec, rev, nil
}

// List returns every record, oldest first (by createdTs, then id). A record
// that cannot be decoded is skipped.
func (s *Store) List(ctx context.Context) ([]*sentinel.Sentinel, error) {
	if c := s.mirror(); c != nil {
		return c.list(), nil
	}
	w, err := s.kv.WatchAll(ctx, jetstream.IgnoreDeletes())
	if err != nil {
		return nil, fmt.Errorf("list sentinels: %w", err)
	}
	defer func() { _ = w.Stop() }()
	var out []*sentinel.Sentinel
	for {
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("list sentinels: %w", context.Cause(ctx))
		case e, ok := <-w.Updates():
			if !ok {
				return nil, errors.New("list sentinels: watcher closed")
			}
			if e == nil { // initial values done
				sortRecords(out)
				return out, nil
			}
			if rec, err := decode(e.Value()); err == nil {
				out = append(out, rec)
			}
		}
	}
}

// Update applies fn to the current record and stores it with
// compare-and-set, retrying on conflict. fn may be called several times; it
// returns ErrSkip to leave the record unchanged. It returns the stored
// record.
func (s *Store) Update(ctx context.Context, id string, fn func(*sentinel.Sentinel) error) (*sentinel.Sentinel, error) {
	return s.UpdateFrom(ctx, id, nil, 0, fn)
}

// UpdateFrom is Update starting from a record the caller already read at
// revision startRev (saving a read); a conflict falls back to fresh reads.
// start is modified by fn and must not be used afterwards.
func (s *Store) UpdateFrom(ctx context.Context, id string, start *sentinel.Sentinel, startRev uint64, fn func(*sentinel.Sentinel) error) (*sentinel.Sentinel, error) {
	for attempt := 0; ; attempt++ {
		var rec *sentinel.Sentinel
		var rev uint64
		var err error
		if attempt == 0 && start != nil {
			rec, rev, err = start, startRev, nil
		} else {
			rec, rev, err = s.Get(ctx, id)
		}
		if err != nil {
			return nil, err
		}
		if err := fn(rec); err != nil {
			if errors.Is(err, ErrSkip) {
				return rec, nil
			}
			return nil, err
		}
		raw, err := json.Marshal(rec)
		if err != nil {
			return nil, fmt.Errorf("encode sentinel %s: %w", id, err)
		}
		if err := s.pause.At(ctx, PointUpdate, id); err != nil {
			return nil, fmt.Errorf("update sentinel %s: %w", id, err)
		}
		nrev, err := s.kv.Update(ctx, id, raw, rev)
		if err == nil {
			s.rememberRecord(id, rec, nrev)
			return rec, nil
		}
		if !(errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch)) || attempt >= 50 {
			return nil, fmt.Errorf("update sentinel %s: %w", id, err)
		}
	}
}

// ErrSkip, returned by an Update function, leaves the record unchanged.
var ErrSkip = errors.New("skip update")

// Delete removes the record; an unknown id wraps ErrNotFound.
func (s *Store) Delete(ctx context.Context, id string) error {
	// The record as the leader holds it (a lagging replica could miss a
	// record another node just created), within a bound: no leader (an
	// election, a node cut off) is an error, not a wait.
	fctx, cancel := context.WithTimeout(ctx, leaderReadTimeout)
	_, _, err := s.Fresh(fctx, id)
	cancel()
	if err != nil {
		return err
	}
	if err := s.kv.Delete(ctx, id); err != nil {
		return fmt.Errorf("delete sentinel %s: %w", id, err)
	}
	if c := s.mirror(); c != nil {
		c.del(id, 0)
	}
	return nil
}

// DeleteMarkerRetention is how long the delete marker a removed record
// leaves in the bucket is kept (24 h; issue 21, item 10: they were kept
// forever, one per sentinel ever removed). Live mirrors see a delete at
// once; a marker only matters to a watcher started within its lifetime.
const DeleteMarkerRetention = 24 * time.Hour

// PurgeDeleteMarkers removes the delete markers older than olderThan.
func (s *Store) PurgeDeleteMarkers(ctx context.Context, olderThan time.Duration) error {
	if err := s.kv.PurgeDeletes(ctx, jetstream.DeleteMarkersOlderThan(olderThan)); err != nil {
		return fmt.Errorf("purge removed sentinels' markers: %w", err)
	}
	return nil
}

// rememberRecord applies this store's own write to the mirror (a copy, so
// the caller's record is not shared).
func (s *Store) rememberRecord(id string, rec *sentinel.Sentinel, rev uint64) {
	if c := s.mirror(); c != nil {
		c.put(id, copyRecord(rec), rev)
	}
}

// remember applies this store's own write to the mirror (a fresh decode, so
// the caller's record is not shared).
func (s *Store) remember(id string, raw []byte, rev uint64) {
	c := s.mirror()
	if c == nil {
		return
	}
	if rec, err := decode(raw); err == nil {
		c.put(id, rec, rev)
	}
}

func decode(raw []byte) (*sentinel.Sentinel, error) {
	var rec sentinel.Sentinel
	if err := json.Unmarshal(raw, &rec); err != nil {
		return nil, err
	}
	if rec.ClosedSubjects == nil {
		rec.ClosedSubjects = []string{}
	}
	return &rec, nil
}

// validKey reports whether id can be a KV key (and so a stored id).
func validKey(id string) bool {
	if id == "" || len(id) > 200 {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}
