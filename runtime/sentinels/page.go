package sentinels

import (
	"container/heap"
	"context"
	"encoding/base64"
	"sort"
	"strconv"
	"strings"

	"github.com/agentproto/sentinel"
)

// Query selects sentinels and pages through them in list order (oldest
// first: createdTs, then id). Every set field must match.
type Query struct {
	// Status, Provider and Session (the target's session) match exactly.
	Status   sentinel.Status
	Provider string
	Session  string
	// SubjectPrefix matches a sentinel with a clause whose subject starts
	// with it.
	SubjectPrefix string
	// Limit is the page size; 0 answers every match in one page.
	Limit int
	// After is the Next cursor of the previous page: the page starts with
	// the first match after that position.
	After string
}

// Page is one page of a query. Next is set when more sentinels matched
// after the last one of the page: passed as Query.After it continues the
// listing. Paging is keyset paging on (createdTs, id), so a sentinel that
// exists for the whole listing is answered exactly once however many are
// created or removed meanwhile (new ones sort last and show on a later
// page; removed ones simply stop showing).
type Page struct {
	Records []*sentinel.Sentinel
	Next    string
}

// pageKey is a record's position in list order.
type pageKey struct {
	created int64
	id      string
}

func keyOf(r *sentinel.Sentinel) pageKey { return pageKey{r.CreatedTs, r.ID} }

func (k pageKey) less(o pageKey) bool {
	if k.created != o.created {
		return k.created < o.created
	}
	return k.id < o.id
}

// cursorPrefix versions the cursor format.
const cursorPrefix = "c1."

// cursor encodes k as an opaque, URL-safe token.
func (k pageKey) cursor() string {
	return cursorPrefix + base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(k.created, 10)+":"+k.id))
}

// parseCursor decodes a cursor; a malformed one is invalid_input.
func parseCursor(s string) (pageKey, error) {
	bad := sentinel.Errorf(sentinel.CodeInvalidInput, "after: %q is not a cursor of this listing (pass the next value of the previous page)", clipCursor(s))
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(s, cursorPrefix))
	if err != nil || !strings.HasPrefix(s, cursorPrefix) {
		return pageKey{}, bad
	}
	ts, id, ok := strings.Cut(string(raw), ":")
	if !ok || id == "" {
		return pageKey{}, bad
	}
	created, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return pageKey{}, bad
	}
	return pageKey{created, id}, nil
}

func clipCursor(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

// matches reports whether r passes the query's filters.
func (q Query) matches(r *sentinel.Sentinel) bool {
	if q.Status != "" && r.Status != q.Status {
		return false
	}
	if q.Provider != "" && r.Provider != q.Provider {
		return false
	}
	if q.Session != "" && r.Spec.Target.SessionID != q.Session {
		return false
	}
	if q.SubjectPrefix != "" {
		for _, c := range r.Spec.Match {
			if strings.HasPrefix(c.Subject, q.SubjectPrefix) {
				return true
			}
		}
		return false
	}
	return true
}

// Page answers one page of q (see Store.Page).
func (s *Service) Page(ctx context.Context, q Query) (Page, error) { return s.store.Page(ctx, q) }

// Page answers one page of q. Served from the in-memory mirror, it copies
// only the records of the page.
func (s *Store) Page(ctx context.Context, q Query) (Page, error) {
	var after *pageKey
	if q.After != "" {
		k, err := parseCursor(q.After)
		if err != nil {
			return Page{}, err
		}
		after = &k
	}
	if q.Limit < 0 {
		return Page{}, sentinel.Errorf(sentinel.CodeInvalidInput, "limit must be positive")
	}
	sel := &selection{q: q, after: after}
	if c := s.mirror(); c != nil {
		if q.Limit > 0 {
			return c.page(q, after), nil
		}
		c.mu.RLock()
		for _, r := range c.recs {
			sel.offer(r)
		}
		sel.keep(func(r *sentinel.Sentinel) *sentinel.Sentinel { return copyRecord(r) })
		c.mu.RUnlock()
	} else {
		recs, err := s.List(ctx)
		if err != nil {
			return Page{}, err
		}
		for _, r := range recs {
			sel.offer(r)
		}
		sel.keep(func(r *sentinel.Sentinel) *sentinel.Sentinel { return r })
	}
	return sel.page(), nil
}

// page answers a page of q (q.Limit > 0) from the mirror's index: a
// binary search for the cursor, then the records in list order until the
// page is full, so a page costs O(log n + what it skips) instead of a pass
// over every record. The index is sorted once (the first page); records
// that came or moved since are sorted among themselves and merged in at
// the next page (O(n + k log k), no sort of every record), and entries of
// records that went are skipped, then dropped at a merge. A record created
// while a page is being answered may miss that page; one removed meanwhile
// is skipped.
func (c *cache) page(q Query, after *pageKey) Page {
	c.mu.RLock()
	if c.index == nil || len(c.added) > 0 || c.dead > len(c.index)/4 {
		c.mu.RUnlock()
		c.mu.Lock()
		c.refreshIndex()
		c.mu.Unlock()
		c.mu.RLock()
	}
	defer c.mu.RUnlock()
	idx := c.index
	start := 0
	if after != nil {
		start = sort.Search(len(idx), func(i int) bool { return after.less(idx[i]) })
	}
	var p Page
	for i := start; i < len(idx); i++ {
		r, ok := c.recs[idx[i].id]
		if !ok || r.CreatedTs != idx[i].created || !q.matches(r) {
			continue
		}
		if len(p.Records) == q.Limit {
			p.Next = keyOf(p.Records[len(p.Records)-1]).cursor()
			break
		}
		p.Records = append(p.Records, copyRecord(r))
	}
	return p
}

// refreshIndex brings the index up to date (mu must be held for writing):
// the first time a sort of every key, then a merge of the sorted added
// keys that keeps only entries of live records, each once.
func (c *cache) refreshIndex() {
	if c.index == nil {
		idx := make([]pageKey, 0, len(c.recs))
		for _, r := range c.recs {
			idx = append(idx, keyOf(r))
		}
		sort.Slice(idx, func(i, j int) bool { return idx[i].less(idx[j]) })
		c.index, c.added, c.dead = idx, nil, 0
		return
	}
	if len(c.added) == 0 && c.dead <= len(c.index)/4 {
		return
	}
	add := c.added
	sort.Slice(add, func(i, j int) bool { return add[i].less(add[j]) })
	out := make([]pageKey, 0, len(c.recs))
	live := func(k pageKey) bool {
		r, ok := c.recs[k.id]
		return ok && r.CreatedTs == k.created && (len(out) == 0 || out[len(out)-1] != k)
	}
	i, j := 0, 0
	for i < len(c.index) || j < len(add) {
		var k pageKey
		if j == len(add) || (i < len(c.index) && !add[j].less(c.index[i])) {
			k, i = c.index[i], i+1
		} else {
			k, j = add[j], j+1
		}
		if live(k) {
			out = append(out, k)
		}
	}
	c.index, c.added, c.dead = out, nil, 0
}

// selection keeps the first limit+1 matches in list order: a bounded
// max-heap, so a page costs one pass over the records and no sort of them
// all. With no limit it keeps every match.
type selection struct {
	q     Query
	after *pageKey
	h     recHeap
	all   []*sentinel.Sentinel
}

func (s *selection) offer(r *sentinel.Sentinel) {
	if !s.q.matches(r) || (s.after != nil && !s.after.less(keyOf(r))) {
		return
	}
	if s.q.Limit == 0 {
		s.all = append(s.all, r)
		return
	}
	if len(s.h) <= s.q.Limit {
		heap.Push(&s.h, r)
		return
	}
	if keyOf(r).less(keyOf(s.h[0])) {
		s.h[0] = r
		heap.Fix(&s.h, 0)
	}
}

// keep replaces the selected records by cp of them (copies taken under
// the mirror's lock).
func (s *selection) keep(cp func(*sentinel.Sentinel) *sentinel.Sentinel) {
	if s.q.Limit == 0 {
		for i, r := range s.all {
			s.all[i] = cp(r)
		}
		return
	}
	for i, r := range s.h {
		s.h[i] = cp(r)
	}
}

func (s *selection) page() Page {
	limit := s.q.Limit
	if limit == 0 {
		sortRecords(s.all)
		return Page{Records: s.all}
	}
	out := []*sentinel.Sentinel(s.h)
	sortRecords(out)
	var p Page
	if len(out) > limit {
		out = out[:limit]
		p.Next = keyOf(out[limit-1]).cursor()
	}
	p.Records = out
	return p
}

// recHeap is a max-heap of records by list order (the latest on top).
type recHeap []*sentinel.Sentinel

func (h recHeap) Len() int           { return len(h) }
func (h recHeap) Less(i, j int) bool { return keyOf(h[j]).less(keyOf(h[i])) }
func (h recHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *recHeap) Push(x any)        { *h = append(*h, x.(*sentinel.Sentinel)) }
func (h *recHeap) Pop() any {
	old := *h
	r := old[len(old)-1]
	*h = old[:len(old)-1]
	return r
}
