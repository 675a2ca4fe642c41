package bus

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// BucketLocks holds the Locker's locks (the bus's own bucket: the Locker
// is generic).
const BucketLocks = "sentinel_locks"

func locksBucket() jetstream.KeyValueConfig {
	return jetstream.KeyValueConfig{Bucket: BucketLocks, Description: "short leases and locks", TTL: LockTTL, Storage: jetstream.FileStorage}
}

// LockTTL is the age of the locks bucket's keys: a lock whose holder
// died is free after it. A live holder renews its key every LockTTL/3.
const LockTTL = 30 * time.Second

// Locker hands out named locks that hold across nodes: a lock is a key
// created in the locks bucket (compare-and-set), renewed while held
// (compare-and-set on its revision) and released by deleting it; the
// bucket's TTL frees a lock whose holder died. An in-process lock per
// name keeps local contenders from spinning on the bucket; it is a
// one-token channel (so waiting on it honours ctx) and is refcounted, so a
// name's entry lives only while someone holds or waits for it.
type Locker struct {
	kv    jetstream.KeyValue
	owner string
	// renew is how often a held lock's key is rewritten (LockTTL/3).
	renew time.Duration

	mu    sync.Mutex
	local map[string]*localLock // mu must be held
}

// localLock is the in-process lock of one name: holding it is having put
// the token into ch. refs counts holders and waiters (mu must be held).
type localLock struct {
	ch   chan struct{}
	refs int
}

// NewLocker returns a locker on the bus's locks bucket; owner identifies
// this node in lock values.
func (b *Bus) NewLocker(owner string) *Locker {
	return &Locker{kv: b.locks, owner: owner, renew: LockTTL / 3, local: map[string]*localLock{}}
}

// Lock acquires the named lock, waiting until it is free or ctx ends (then
// the error wraps context.Cause(ctx), e.g. context.DeadlineExceeded). The
// returned function releases it; calling it more than once is harmless.
func (l *Locker) Lock(ctx context.Context, name string) (func(), error) {
	ll := l.acquireLocal(name)
	select {
	case ll.ch <- struct{}{}:
	case <-ctx.Done():
		l.releaseLocal(name, ll, false)
		return nil, fmt.Errorf("lock %s: %w", name, context.Cause(ctx))
	}
	key := "lock." + name
	wait := 2 * time.Millisecond
	for {
		rev, err := l.kv.Create(ctx, key, []byte(l.owner))
		if err == nil {
			h := l.hold(key, rev)
			var once sync.Once
			return func() {
				once.Do(func() {
					rev := h.stop()
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					defer cancel()
					_ = l.kv.Delete(ctx, key, jetstream.LastRevision(rev))
					l.releaseLocal(name, ll, true)
				})
			}, nil
		}
		if ctx.Err() != nil {
			l.releaseLocal(name, ll, true)
			return nil, fmt.Errorf("lock %s: %w", name, context.Cause(ctx))
		}
		if !errors.Is(err, jetstream.ErrKeyExists) {
			l.releaseLocal(name, ll, true)
			return nil, fmt.Errorf("lock %s: %w", name, err)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			l.releaseLocal(name, ll, true)
			return nil, fmt.Errorf("lock %s: %w", name, context.Cause(ctx))
		case <-t.C:
		}
		if wait < 200*time.Millisecond {
			wait *= 2
		}
	}
}

// holding renews one held lock's key until stopped.
type holding struct {
	quit chan struct{}
	done chan struct{}
	rev  uint64 // the key's revision; read after done is closed
}

// hold starts renewing key (created at rev) every l.renew.
func (l *Locker) hold(key string, rev uint64) *holding {
	h := &holding{quit: make(chan struct{}), done: make(chan struct{}), rev: rev}
	go func() {
		defer close(h.done)
		t := time.NewTicker(l.renew)
		defer t.Stop()
		for {
			select {
			case <-h.quit:
				return
			case <-t.C:
			}
			ctx, cancel := context.WithTimeout(context.Background(), l.renew)
			nrev, err := l.kv.Update(ctx, key, []byte(l.owner), h.rev)
			cancel()
			switch {
			case err == nil:
				h.rev = nrev
			case errors.Is(err, jetstream.ErrKeyExists), errors.Is(err, jetstream.ErrKeyRevisionMismatch),
				errors.Is(err, jetstream.ErrKeyNotFound), errors.Is(err, jetstream.ErrKeyDeleted):
				return // lapsed (a pause past LockTTL): never overwrite a successor
			}
			// Another error (an election): try again at the next renewal.
		}
	}()
	return h
}

// stop ends the renewals and returns the key's last revision.
func (h *holding) stop() uint64 {
	close(h.quit)
	<-h.done
	return h.rev
}

// acquireLocal returns the name's local lock with one more reference.
func (l *Locker) acquireLocal(name string) *localLock {
	l.mu.Lock()
	defer l.mu.Unlock()
	ll, ok := l.local[name]
	if !ok {
		ll = &localLock{ch: make(chan struct{}, 1)}
		l.local[name] = ll
	}
	ll.refs++
	return ll
}

// releaseLocal drops one reference (and the token when held), forgetting
// the name once nobody holds or waits for it.
func (l *Locker) releaseLocal(name string, ll *localLock, held bool) {
	if held {
		<-ll.ch
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	ll.refs--
	if ll.refs == 0 {
		delete(l.local, name)
	}
}
