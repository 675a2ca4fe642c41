package storage

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/agentproto/sentinel"
)

// disk is a filesystem whose free space the test sets.
type disk struct {
	mu   sync.Mutex
	free uint64
}

func (d *disk) set(n uint64) { d.mu.Lock(); d.free = n; d.mu.Unlock() }
func (d *disk) Free(string) (uint64, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.free, nil
}

// server counts restarts; JetStream is on unless off is set.
type server struct {
	off      bool
	restarts int
}

func (s *server) JetStreamEnabled() bool { return !s.off }
func (s *server) Restart() error         { s.restarts++; s.off = false; return nil }

func isFull(err error) bool {
	var de *sentinel.Error
	return errors.As(err, &de) && de.Code == sentinel.CodeStorageFull
}

// TestADiskEpisodeRefusesWritesWithHysteresisAndRestartsOnce: under
// MinFree writes are refused; they resume only above twice MinFree, after
// exactly one restart of the server.
func TestADiskEpisodeRefusesWritesWithHysteresisAndRestartsOnce(t *testing.T) {
	ctx := context.Background()
	d, srv := &disk{free: 100}, &server{}
	g := New(Config{Dir: "/x", MinFree: 10}, WithFree(d.Free), WithServer(srv))
	g.Check(ctx)
	if g.Err() != nil {
		t.Fatalf("room to spare: %v", g.Err())
	}
	d.set(5)
	g.Check(ctx)
	if !isFull(g.Err()) {
		t.Fatalf("under MinFree: want storage_full, got %v", g.Err())
	}
	d.set(15) // above MinFree, under twice MinFree
	g.Check(ctx)
	if !isFull(g.Err()) || srv.restarts != 0 {
		t.Fatalf("under twice MinFree: want still full and no restart, got %v, %d restarts", g.Err(), srv.restarts)
	}
	d.set(25)
	g.Check(ctx)
	if g.Err() != nil || srv.restarts != 1 {
		t.Fatalf("room again: want writable after one restart, got %v, %d restarts", g.Err(), srv.restarts)
	}
	g.Check(ctx)
	if srv.restarts != 1 {
		t.Fatalf("restarted %d times, want once", srv.restarts)
	}
}

// TestDisabledJetStreamIsFullUntilRestarted: nats-server disabling
// JetStream makes the node refuse writes, and a restart (with room on
// disk) brings them back.
func TestDisabledJetStreamIsFullUntilRestarted(t *testing.T) {
	ctx := context.Background()
	d, srv := &disk{free: 100}, &server{off: true}
	g := New(Config{Dir: "/x", MinFree: 10}, WithFree(d.Free), WithServer(srv))
	g.Check(ctx)
	if g.Err() != nil || srv.restarts != 1 {
		t.Fatalf("want one restart and writable, got %v, %d restarts", g.Err(), srv.restarts)
	}
}

// TestTheStorageLimitRefusesNearItAndResumesBelowNinetyPercent: with a
// MaxStore, writes are refused from 98% and resume under 90%; a Trip
// with no limit to read clears at the next check.
func TestTheStorageLimitRefusesNearItAndResumesBelowNinetyPercent(t *testing.T) {
	ctx := context.Background()
	var used int64
	g := New(Config{MaxStore: 1000}, WithUsed(func(context.Context) (int64, error) { return used, nil }))
	for _, step := range []struct {
		used int64
		full bool
	}{{500, false}, {985, true}, {950, true}, {899, false}, {950, false}} {
		used = step.used
		g.Check(ctx)
		if isFull(g.Err()) != step.full {
			t.Fatalf("used %d: full=%v, want %v (%v)", step.used, isFull(g.Err()), step.full, g.Err())
		}
	}
	bare := New(Config{})
	bare.Trip()
	if !isFull(bare.Err()) {
		t.Fatalf("a trip refuses writes: %v", bare.Err())
	}
	bare.Check(ctx)
	if bare.Err() != nil {
		t.Fatalf("a trip with no limit to read clears at the next check: %v", bare.Err())
	}
}
