package sentinels

import (
	"context"
	"runtime"
	"sync"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentproto/sentinel"
)

// mirrorQueue bounds the watcher's updates read ahead of the one being
// applied (their records decoding meanwhile).
const mirrorQueue = 256

// mirrorUpdate is one watcher update on its way to the mirror: rec and
// ok are set, and done closed, once its record is decoded (at once for
// an update that needs no decode).
type mirrorUpdate struct {
	e      jetstream.KeyValueEntry // nil: the end of the initial values
	decode bool
	rec    *sentinel.Sentinel
	ok     bool
	done   chan struct{}
}

// feed applies the watcher's updates to the mirror c in the order the
// watcher delivers them, until ctx ends or the watcher ends by itself (the
// store then stops using c), closing initial once the initial values are
// applied. Records are decoded ahead of the update being applied, by as
// many goroutines as there are processors: a restart loads every record
// of the bucket, and decoding them one after another was most of its time
// (BENCHMARKS.md, "100,000 sentinels on one node"). Only the decoding runs
// out of order; every update, its check against this store's own writes
// and the advance of upTo are applied one after another, as delivered.
func (s *Store) feed(ctx context.Context, c *cache, w jetstream.KeyWatcher, initial chan struct{}) {
	queue := make(chan *mirrorUpdate, mirrorQueue)
	work := make(chan *mirrorUpdate, mirrorQueue)
	var wg sync.WaitGroup
	defer wg.Wait()
	// However the applier below returns, the reader stops with it.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for range max(1, runtime.GOMAXPROCS(0)) {
		wg.Go(func() {
			for u := range work {
				u.rec, u.ok = decodeOK(u.e.Value())
				close(u.done)
			}
		})
	}
	wg.Go(func() {
		defer close(queue)
		defer close(work)
		for {
			select {
			case <-ctx.Done():
				return
			case e, ok := <-w.Updates():
				if !ok {
					// The watcher ended by itself: a frozen mirror would go on
					// answering with stale records, so the store stops using
					// it and reads the bucket until restarted.
					s.dropMirror(c)
					return
				}
				u := &mirrorUpdate{e: e, done: make(chan struct{})}
				// A put this node's own write already applied needs no decode.
				u.decode = e != nil && e.Operation() == jetstream.KeyValuePut && c.newer(e.Key(), e.Revision())
				if !u.decode {
					close(u.done)
				}
				select {
				case queue <- u:
				case <-ctx.Done():
					return
				}
				if u.decode {
					select {
					case work <- u:
					case <-ctx.Done():
						return
					}
				}
			}
		}
	})
	signalled := false
	for u := range queue {
		select {
		case <-u.done:
		case <-ctx.Done():
			return
		}
		if err := s.Pause.At(ctx, PointMirrorApply, ""); err != nil {
			return
		}
		e := u.e
		switch {
		case e == nil:
			if !signalled {
				signalled = true
				close(initial)
			}
			continue
		case e.Operation() != jetstream.KeyValuePut:
			c.forget(e.Key(), e.Revision())
		case u.decode && u.ok:
			c.put(e.Key(), u.rec, e.Revision())
		}
		c.advance(e.Revision())
	}
}

// decodeOK is decode for the mirror: a record that does not decode is
// left out of it (the bucket still holds it; reads of it fail there).
func decodeOK(raw []byte) (*sentinel.Sentinel, bool) {
	rec, err := decode(raw)
	return rec, err == nil
}
