package follow

import (
	"sync"
	"time"
)

// Timer is a stoppable pending call.
type Timer interface{ Stop() bool }

// Clock gives the time and schedules calls; tests inject a fake.
type Clock interface {
	Now() time.Time
	AfterFunc(d time.Duration, f func()) Timer
}

// RealClock is the wall clock.
type RealClock struct{}

// Now returns time.Now.
func (RealClock) Now() time.Time { return time.Now() }

// AfterFunc wraps time.AfterFunc.
func (RealClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// batch is one follower's pending entries, and the callbacks of the
// lifecycle messages that fed it (told once the batch is delivered).
type batch struct {
	entries []Entry
	done    []func(ok bool)
	timer   Timer
}

// Batcher coalesces entries per follower: the first entry starts a timer
// of the follow's batchMs (0 = next tick) and later ones join; when it
// fires the batch is removed and handed to flush, and every callback
// given with its entries hears whether flush succeeded.
type Batcher struct {
	clock Clock
	flush func(follower string, entries []Entry) error

	mu      sync.Mutex
	batches map[string]*batch
	closed  bool
	// inflight counts running flushes; Add happens under mu while a batch
	// is removed, so Close can wait for them.
	inflight sync.WaitGroup
}

// NewBatcher returns a batcher calling flush (from the clock's timer
// goroutine) for each due batch.
func NewBatcher(clock Clock, flush func(follower string, entries []Entry) error) *Batcher {
	return &Batcher{clock: clock, flush: flush, batches: map[string]*batch{}}
}

// Add puts e into follower's batch, collapsing it with an earlier entry of
// its group.
func (b *Batcher) Add(follower string, e Entry, batchMs int) { b.AddThen(follower, e, batchMs, nil) }

// AddThen is Add, with done told (once) whether the batch that holds e was
// delivered: false also when the batcher is closed and e was not taken.
func (b *Batcher) AddThen(follower string, e Entry, batchMs int, done func(ok bool)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		if done != nil {
			done(false)
		}
		return
	}
	bt, ok := b.batches[follower]
	if !ok {
		bt = &batch{}
		b.batches[follower] = bt
		bt.timer = b.clock.AfterFunc(time.Duration(batchMs)*time.Millisecond, func() { b.Flush(follower) })
	}
	bt.entries = Collapse(bt.entries, e)
	if done != nil {
		bt.done = append(bt.done, done)
	}
}

// Flush removes follower's batch now and delivers it (nothing for an empty
// or missing batch).
func (b *Batcher) Flush(follower string) {
	b.mu.Lock()
	bt, ok := b.batches[follower]
	if ok {
		delete(b.batches, follower)
		bt.timer.Stop()
		b.inflight.Add(1)
	}
	b.mu.Unlock()
	if !ok {
		return
	}
	defer b.inflight.Done()
	var err error
	if len(bt.entries) > 0 {
		err = b.flush(follower, bt.entries)
	}
	for _, d := range bt.done {
		d(err == nil)
	}
}

// Pending returns the followers with a pending batch.
func (b *Batcher) Pending() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]string, 0, len(b.batches))
	for f := range b.batches {
		out = append(out, f)
	}
	return out
}

// Close stops accepting entries, flushes every pending batch now and waits
// for flushes in flight (timer-fired ones included).
func (b *Batcher) Close() {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	for _, f := range b.Pending() {
		b.Flush(f)
	}
	b.inflight.Wait()
}
