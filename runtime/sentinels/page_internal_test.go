package sentinels

import (
	"context"
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
