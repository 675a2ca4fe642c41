package bus

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentproto/sentinel"
)

// KV is a small compare-and-set view of a KV bucket whose errors are the
// domain's storage sentinels (sentinel.ErrNotFound, sentinel.ErrConflict).
// It satisfies providers.KV.
type KV struct {
	kv jetstream.KeyValue
}

// NewKV wraps a bucket.
func NewKV(kv jetstream.KeyValue) *KV { return &KV{kv: kv} }

// Get returns the value and revision of key, or sentinel.ErrNotFound.
func (k *KV) Get(ctx context.Context, key string) ([]byte, uint64, error) {
	e, err := k.kv.Get(ctx, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		return nil, 0, fmt.Errorf("kv get %s: %w", key, sentinel.ErrNotFound)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("kv get %s: %w", key, err)
	}
	return e.Value(), e.Revision(), nil
}

// Create stores key only if it does not exist, else sentinel.ErrConflict.
func (k *KV) Create(ctx context.Context, key string, val []byte) (uint64, error) {
	rev, err := k.kv.Create(ctx, key, val)
	if errors.Is(err, jetstream.ErrKeyExists) {
		return 0, fmt.Errorf("kv create %s: %w", key, sentinel.ErrConflict)
	}
	if err != nil {
		return 0, fmt.Errorf("kv create %s: %w", key, storageCoded(err))
	}
	return rev, nil
}

// Update stores key only if its revision is rev, else sentinel.ErrConflict.
func (k *KV) Update(ctx context.Context, key string, val []byte, rev uint64) (uint64, error) {
	nrev, err := k.kv.Update(ctx, key, val, rev)
	if errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		return 0, fmt.Errorf("kv update %s: %w", key, sentinel.ErrConflict)
	}
	if err != nil {
		return 0, fmt.Errorf("kv update %s: %w", key, storageCoded(err))
	}
	return nrev, nil
}

// Put stores key unconditionally.
func (k *KV) Put(ctx context.Context, key string, val []byte) (uint64, error) {
	rev, err := k.kv.Put(ctx, key, val)
	if err != nil {
		return 0, fmt.Errorf("kv put %s: %w", key, storageCoded(err))
	}
	return rev, nil
}

// Delete removes key; a missing key is not an error.
func (k *KV) Delete(ctx context.Context, key string) error {
	if err := k.kv.Delete(ctx, key); err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
		return fmt.Errorf("kv delete %s: %w", key, err)
	}
	return nil
}

// Keys lists every key (empty for an empty bucket).
func (k *KV) Keys(ctx context.Context) ([]string, error) {
	lister, err := k.kv.ListKeys(ctx)
	if err != nil {
		return nil, fmt.Errorf("kv keys: %w", err)
	}
	var out []string
	for key := range lister.Keys() {
		out = append(out, key)
	}
	return out, nil
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
	return &Locker{kv: b.Locks, owner: owner, renew: LockTTL / 3, local: map[string]*localLock{}}
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
