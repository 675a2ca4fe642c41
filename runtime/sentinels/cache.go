package sentinels

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentproto/sentinel"
)

// cache is an in-memory mirror of the records bucket, fed by a KV watcher
// (so writes of other nodes arrive) and by this store's own writes (so a
// List right after a write sees it). An entry is replaced only by a higher
// revision, so a late watcher event never undoes a newer local write.
//
// known keeps the highest revision applied per live id. A local delete
// keeps the id's revision (the watcher may still deliver older puts of it);
// the watcher's own delete event is the last of that key's history (the
// watcher delivers a key's changes in order), so it moves the id to gone, a
// bounded FIFO of the last goneCap deleted ids: it only has to outlive a
// write of this store whose result is applied after the watcher delivered
// it and a later delete (milliseconds). Neither map grows with every id
// ever seen.
//
// A record in recs is never modified in place: a write replaces it whole
// with a record no caller holds (a fresh decode or copy), so a reader may
// keep the pointers it read under the lock (ordered, Shared) and find the
// records as they were.
type cache struct {
	mu    sync.RWMutex
	recs  map[string]*sentinel.Sentinel
	known map[string]uint64 // highest revision applied per live id (see above)
	gone  map[string]uint64 // delete revision of recently deleted ids
	order []string          // gone's ids, oldest first
	ready bool
	// index holds the records' keys in list order for Page (page.go);
	// added holds the keys of records that came or moved since, merged in
	// at the next page, and dead counts index entries whose record went or
	// moved (skipped by pages, dropped at the next merge).
	index []pageKey
	added []pageKey
	dead  int
	// upTo is the bucket sequence the watcher has delivered up to; wake
	// (under wmu, nil when nobody waits) is closed when it advances.
	upTo atomic.Uint64
	wmu  sync.Mutex
	wake chan struct{}
	stop context.CancelFunc
	done chan struct{}
	// watcher feeds the mirror (tests end it to play a watcher that closed).
	watcher jetstream.KeyWatcher
}

// StartCache mirrors the bucket in memory and serves List from the mirror.
// It returns once the initial values are loaded; StopCache stops it. A
// supervisor (mirror.go) restarts the mirror when its watcher ends by
// itself or stalls.
func (s *Store) StartCache(ctx context.Context) error {
	c, err := s.startMirror(ctx)
	if err != nil {
		return err
	}
	s.install(c)
	s.superviseMirror()
	return nil
}

// startMirror starts a mirror and returns it once its initial values are
// loaded.
func (s *Store) startMirror(ctx context.Context) (*cache, error) {
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	w, err := s.kv.WatchAll(wctx)
	if err != nil {
		cancel()
		return nil, err
	}
	c := &cache{recs: map[string]*sentinel.Sentinel{}, known: map[string]uint64{}, gone: map[string]uint64{}, stop: cancel, done: make(chan struct{}), watcher: w}
	initial := make(chan struct{})
	go func() {
		defer close(c.done)
		defer func() { _ = w.Stop() }()
		signalled := false
		for {
			select {
			case <-wctx.Done():
				return
			case e, ok := <-w.Updates():
				if !ok {
					// The watcher ended by itself: a frozen mirror would go on
					// answering with stale records, so the store stops using
					// it and reads the bucket until restarted.
					s.dropMirror(c)
					return
				}
				if err := s.pause.At(wctx, PointMirrorApply, ""); err != nil {
					return
				}
				if e == nil {
					if !signalled {
						signalled = true
						close(initial)
					}
					continue
				}
				if e.Operation() == jetstream.KeyValuePut {
					if !c.newer(e.Key(), e.Revision()) {
						c.advance(e.Revision())
						continue // this node's own write, already applied
					}
					if rec, err := decode(e.Value()); err == nil {
						c.put(e.Key(), rec, e.Revision())
					}
				} else {
					c.forget(e.Key(), e.Revision())
				}
				c.advance(e.Revision())
			}
		}
	}()
	select {
	case <-initial:
	case <-ctx.Done():
		cancel()
		<-c.done
		return nil, context.Cause(ctx)
	case <-c.done: // the watcher ended before its initial values
		cancel()
		return nil, errors.New("sentinel records watcher ended while loading")
	}
	c.mu.Lock()
	c.ready = true
	c.mu.Unlock()
	return c, nil
}

// install makes c the mirror the store serves from.
func (s *Store) install(c *cache) {
	s.mu.Lock()
	s.cache = c
	s.mu.Unlock()
}

// StopCache stops the mirror and its supervisor; List falls back to
// reading the bucket.
func (s *Store) StopCache() {
	s.stopSupervisor()
	s.mu.Lock()
	c := s.cache
	s.cache = nil
	s.mu.Unlock()
	if c != nil {
		c.stop()
		<-c.done
	}
}

// dropMirror stops serving from c (its watcher died).
func (s *Store) dropMirror(c *cache) {
	s.mu.Lock()
	if s.cache == c {
		s.cache = nil
	}
	s.mu.Unlock()
}

// SyncMirror waits, bounded by ctx, until the mirror has applied every
// write the bucket held when it was called (another node's create a
// moment ago included). Without a mirror it returns at once.
func (s *Store) SyncMirror(ctx context.Context) error {
	c := s.mirror()
	if c == nil {
		return nil
	}
	st, err := s.kv.Status(ctx)
	if err != nil {
		return fmt.Errorf("sentinel records status: %w", err)
	}
	bs, ok := st.(*jetstream.KeyValueBucketStatus)
	if !ok {
		return nil
	}
	last := bs.StreamInfo().State.LastSeq
	for {
		wake := c.waiter()
		if c.upTo.Load() >= last {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("sentinel records mirror behind the bucket: %w", context.Cause(ctx))
		case <-wake:
		}
	}
}

// advance records that the watcher delivered the bucket up to rev and
// wakes SyncMirror's waiters (only the watcher goroutine calls it).
func (c *cache) advance(rev uint64) {
	if rev <= c.upTo.Load() {
		return
	}
	c.upTo.Store(rev)
	c.wmu.Lock()
	if c.wake != nil {
		close(c.wake)
		c.wake = nil
	}
	c.wmu.Unlock()
}

// waiter returns a channel closed at the next advance. A caller reads
// upTo after taking it, so an advance between the two is never missed.
func (c *cache) waiter() <-chan struct{} {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.wake == nil {
		c.wake = make(chan struct{})
	}
	return c.wake
}

// ListFresh is List read from the bucket itself, bypassing the mirror
// (which may trail other nodes' writes and deletes by a moment).
func (s *Store) ListFresh(ctx context.Context) ([]*sentinel.Sentinel, error) {
	return NewStore(s.kv).List(ctx) // a store without a mirror reads the bucket
}

func (s *Store) mirror() *cache {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.cache
}

func (c *cache) newer(id string, rev uint64) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return rev > c.floor(id)
}

// goneCap bounds how many deleted ids the mirror remembers.
const goneCap = 1024

// floor is the revision a change of id must exceed to apply (mu must be
// held).
func (c *cache) floor(id string) uint64 {
	return max(c.known[id], c.gone[id])
}

// get returns a copy of one record and its revision.
func (c *cache) get(id string) (*sentinel.Sentinel, uint64, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	r, ok := c.recs[id]
	if !ok {
		return nil, 0, false
	}
	return copyRecord(r), c.known[id], true
}

func (c *cache) put(id string, rec *sentinel.Sentinel, rev uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if rev <= c.floor(id) {
		return
	}
	delete(c.gone, id)
	c.known[id] = rev
	if old, ok := c.recs[id]; !ok || old.CreatedTs != rec.CreatedTs {
		if ok {
			c.dead++
		}
		c.track(keyOf(rec))
	}
	c.recs[id] = rec
}

// track notes a key the page index lacks (mu must be held for writing).
// Before the first page there is no index to keep; past a churn of half
// the records without a page, the next page sorts afresh.
func (c *cache) track(k pageKey) {
	if c.index == nil {
		return
	}
	c.added = append(c.added, k)
	if len(c.added) > len(c.recs)/2+1024 {
		c.index, c.added, c.dead = nil, nil, 0
	}
}

// del applies this store's own delete (at rev, 0 when unknown): the record
// goes, its revision stays known until the watcher's delete event (forget)
// arrives, so a late put event of the deleted record cannot bring it back.
func (c *cache) del(id string, rev uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if rev != 0 && rev < c.known[id] {
		return
	}
	if _, ok := c.recs[id]; ok {
		c.dead++
	}
	delete(c.recs, id)
}

// forget applies a delete (or purge) event of the watcher at rev: every
// earlier change of id has been delivered, so the id leaves known for gone.
// An event older than a write already applied (the id was written again
// after this delete) is ignored.
func (c *cache) forget(id string, rev uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if rev < c.floor(id) {
		return
	}
	if _, ok := c.recs[id]; ok {
		c.dead++
	}
	delete(c.recs, id)
	delete(c.known, id)
	if _, ok := c.gone[id]; !ok {
		c.order = append(c.order, id)
	}
	c.gone[id] = rev
	for len(c.order) > goneCap {
		delete(c.gone, c.order[0])
		c.order = slices.Delete(c.order, 0, 1)
	}
}

// copyRecord copies a record deeply enough that callers may modify it.
func copyRecord(r *sentinel.Sentinel) *sentinel.Sentinel {
	var cp sentinel.Sentinel
	copyInto(&cp, r)
	return &cp
}

// copyInto writes into dst a copy of r as deep as copyRecord's.
func copyInto(dst, r *sentinel.Sentinel) {
	*dst = *r
	dst.Spec.Match = slices.Clone(r.Spec.Match)
	for i := range dst.Spec.Match {
		dst.Spec.Match[i].Types = slices.Clone(r.Spec.Match[i].Types)
	}
	dst.Handle.State = maps.Clone(r.Handle.State)
	dst.TerminalSubjects = slices.Clone(r.TerminalSubjects)
	dst.ClosedSubjects = slices.Clone(r.ClosedSubjects)
	dst.Seen = bytes.Clone(r.Seen)
}

func sortRecords(out []*sentinel.Sentinel) {
	sort.Slice(out, func(i, j int) bool {
		if out[i].CreatedTs != out[j].CreatedTs {
			return out[i].CreatedTs < out[j].CreatedTs
		}
		return out[i].ID < out[j].ID
	})
}
