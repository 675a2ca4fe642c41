package sentinels

import (
	"context"
	"maps"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
)

// Scans over many records, served from the record mirror (cache.go) when
// there is one: the records of a hook key, every record in list order,
// and selections without copies.

// WithHook returns the records bound to a hook key, oldest first (from
// the mirror when there is one).
func (s *Store) WithHook(ctx context.Context, key string) ([]*sentinel.Sentinel, error) {
	if c := s.mirror(); c != nil {
		return c.withHook(key), nil
	}
	recs, err := s.List(ctx)
	if err != nil {
		return nil, err
	}
	return withHook(recs, key), nil
}

// Shared returns every record, oldest first, as List does; from the mirror
// without copying a record. The records are then the mirror's own: it never
// modifies a record it holds (a write replaces it whole), so each stays as
// it was when listed, but the caller must neither modify a record nor
// anything it references (the handle's State map, the slices), and must
// hand a provider a copy of what it may modify. Without a mirror the
// records are fresh copies read from the bucket.
func (s *Store) Shared(ctx context.Context) ([]*sentinel.Sentinel, error) {
	if c := s.mirror(); c != nil {
		return c.ordered(), nil
	}
	return s.List(ctx)
}

// HandleCopy returns h with a State map of its own, as deep as a record
// copy's: what a provider is handed from a shared record (Shared).
func HandleCopy(h sentinel.Handle) sentinel.Handle {
	h.State = maps.Clone(h.State)
	return h
}

// Select returns the ids of the records pred accepts, in no particular
// order. From the mirror it copies nothing: pred sees the mirror's own
// records under its read lock and must neither keep nor modify them (nor
// call back into the store).
func (s *Store) Select(ctx context.Context, pred func(*sentinel.Sentinel) bool) ([]string, error) {
	if c := s.mirror(); c != nil {
		c.mu.RLock()
		defer c.mu.RUnlock()
		var ids []string
		for id, r := range c.recs {
			if pred(r) {
				ids = append(ids, id)
			}
		}
		return ids, nil
	}
	recs, err := s.List(ctx)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, r := range recs {
		if pred(r) {
			ids = append(ids, r.ID)
		}
	}
	return ids, nil
}

// withHook returns copies of the records bound to a hook key, oldest
// first: one pass over the mirror without copying the others.
func (c *cache) withHook(key string) []*sentinel.Sentinel {
	c.mu.RLock()
	var out []*sentinel.Sentinel
	for _, r := range c.recs {
		if providers.HookKeyOf(r.Handle) == key {
			out = append(out, copyRecord(r))
		}
	}
	c.mu.RUnlock()
	sortRecords(out)
	return out
}

// list returns copies of every record, oldest first (see ordered); the
// copies share one allocation.
func (c *cache) list() []*sentinel.Sentinel {
	recs := c.ordered()
	slab := make([]sentinel.Sentinel, len(recs))
	for i, r := range recs {
		copyInto(&slab[i], r)
		recs[i] = &slab[i]
	}
	return recs
}

// ordered returns the mirror's own records (not copies), oldest first: in
// the order of the page index (sorted once, then kept by merges, page.go),
// so a listing costs no sort of every record. The mirror never modifies a
// record it holds (a write replaces it whole), so the records stay as they
// were when listed, outside the lock too; callers must not modify them.
func (c *cache) ordered() []*sentinel.Sentinel {
	c.mu.RLock()
	if c.index == nil || len(c.added) > 0 || c.dead > len(c.index)/4 {
		c.mu.RUnlock()
		c.mu.Lock()
		c.refreshIndex()
		c.mu.Unlock()
		c.mu.RLock()
	}
	defer c.mu.RUnlock()
	out := make([]*sentinel.Sentinel, 0, len(c.recs))
	if len(c.added) > 0 || c.index == nil {
		// Records came between the refresh and the read lock: list them
		// all the plain way.
		for _, r := range c.recs {
			out = append(out, r)
		}
		sortRecords(out)
		return out
	}
	for _, k := range c.index {
		r, ok := c.recs[k.id]
		if !ok || r.CreatedTs != k.created || len(out) == len(c.recs) {
			continue
		}
		out = append(out, r)
	}
	return out
}
