package sentinels

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/agentproto/sentinel"
)

// BenchmarkPage answers a page of 100 from a mirror of 100,000 records,
// from the middle of the listing.
func BenchmarkPage(b *testing.B) {
	c := &cache{recs: map[string]*sentinel.Sentinel{}, known: map[string]uint64{}, gone: map[string]uint64{}, ready: true}
	for i := range 100000 {
		r := &sentinel.Sentinel{ID: sentinel.NewSentinelID(), Status: sentinel.StatusActive, Provider: "fake", CreatedTs: int64(1000 + i),
			Spec: sentinel.Spec{Match: []sentinel.Clause{{Subject: "github:o/r#1", Types: []string{"*"}}}, Target: sentinel.Target{Kind: sentinel.TargetSession, SessionID: "s1"}}}
		c.recs[r.ID] = r
	}
	s := &Store{cache: c}
	ctx := context.Background()
	p, err := s.Page(ctx, Query{Limit: 50000})
	if err != nil {
		b.Fatal(err)
	}
	mid := p.Next
	b.ResetTimer()
	for range b.N {
		if _, err := s.Page(ctx, Query{Limit: 100, After: mid}); err != nil {
			b.Fatal(err)
		}
	}
}

// The page index stays true under churn: after any mix of creates,
// removals, re-creates and moved createdTs between pages, walking the pages
// answers every live record once, in list order.
func TestPageIndexMergesChurn(t *testing.T) {
	c := &cache{recs: map[string]*sentinel.Sentinel{}, known: map[string]uint64{}, gone: map[string]uint64{}, ready: true}
	s := &Store{cache: c}
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	rev := uint64(0)
	ids := []string{}
	put := func(id string, ts int64) {
		rev++
		c.put(id, &sentinel.Sentinel{ID: id, Status: sentinel.StatusActive, CreatedTs: ts}, rev)
	}
	for i := range 300 {
		id := fmt.Sprintf("sen_%04d", i)
		ids = append(ids, id)
		put(id, int64(rng.IntN(50)))
	}
	for round := range 40 {
		for range rng.IntN(30) {
			id := ids[rng.IntN(len(ids))]
			switch rng.IntN(4) {
			case 0: // removed (own delete, then the watcher's)
				rev++
				c.del(id, 0)
				c.forget(id, rev)
			case 1: // created (again) or moved
				put(id, int64(rng.IntN(50)))
			case 2: // rewritten in place
				if r, _, ok := c.get(id); ok {
					put(id, r.CreatedTs)
				}
			default:
				id := fmt.Sprintf("sen_n%d_%d", round, rng.IntN(1000))
				ids = append(ids, id)
				put(id, int64(rng.IntN(50)))
			}
		}
		want := c.list()
		var got []*sentinel.Sentinel
		q := Query{Limit: 1 + rng.IntN(40)}
		for {
			p, err := s.Page(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, p.Records...)
			if p.Next == "" {
				break
			}
			q.After = p.Next
		}
		if len(got) != len(want) {
			t.Fatalf("round %d: %d records paged, %d live", round, len(got), len(want))
		}
		for i := range want {
			if got[i].ID != want[i].ID {
				t.Fatalf("round %d: record %d is %s, want %s", round, i, got[i].ID, want[i].ID)
			}
		}
	}
}

// BenchmarkList lists a mirror of 100,000 records (copies, in list
// order), as a poll tick does.
func BenchmarkList(b *testing.B) {
	c := &cache{recs: map[string]*sentinel.Sentinel{}, known: map[string]uint64{}, gone: map[string]uint64{}, ready: true}
	for i := range 100000 {
		r := &sentinel.Sentinel{ID: sentinel.NewSentinelID(), Status: sentinel.StatusActive, Provider: "fake", CreatedTs: int64(1000 + i),
			Spec:   sentinel.Spec{Match: []sentinel.Clause{{Subject: "github:o/r#1", Types: []string{"*"}}}, Target: sentinel.Target{Kind: sentinel.TargetSession, SessionID: "s1"}},
			Handle: sentinel.Handle{State: map[string]any{"hookKey": "fk-x", "subjects": []string{"github:o/r#1"}}}}
		c.recs[r.ID] = r
	}
	b.ResetTimer()
	for range b.N {
		if got := c.list(); len(got) != 100000 {
			b.Fatalf("listed %d", len(got))
		}
	}
}
