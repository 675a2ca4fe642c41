package sentinels

import (
	"context"
	"sync"
	"time"

	"github.com/agentproto/sentinel"
)

// Bounds of the unknown hook key path (push ingress asks KnownHook before
// it reads a body, for any key a sender makes up).
const (
	// hookMissTTL is how long a key that no record binds, after a
	// catch-up, is answered unknown from memory (its records' mirror is
	// still asked first: a key it learns meanwhile is known at once).
	hookMissTTL = 2 * time.Second
	// hookMissKeys bounds the remembered unknown keys.
	hookMissKeys = 4096
	// hookMissWaiters bounds the requests waiting for one shared
	// catch-up; past it a miss answers unavailable (503) at once.
	hookMissWaiters = 64
	// hookCatchUpTimeout bounds one catch-up.
	hookCatchUpTimeout = 2 * time.Second
)

// hookMisses makes an unknown hook key cheap in a cluster. A key the
// record mirror does not know costs a catch-up with the records bucket
// (a JetStream request), so that a sentinel another node created a moment
// ago is found; here a key found unknown after a catch-up is remembered
// for hookMissTTL, and the catch-ups of concurrent misses are shared: at
// most one runs at a time, and every miss waits for the first one that
// started after it arrived (so it still sees every record written before
// it), at most hookMissWaiters at once. The zero value is ready.
type hookMisses struct {
	mu      sync.Mutex
	unknown map[string]time.Time
	gate    catchUpGate
}

// remembered reports whether key was found unknown less than hookMissTTL
// ago.
func (h *hookMisses) remembered(key string, now time.Time) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	until, ok := h.unknown[key]
	if ok && now.Before(until) {
		return true
	}
	if ok {
		delete(h.unknown, key)
	}
	return false
}

// remember records key as unknown until now + hookMissTTL.
func (h *hookMisses) remember(key string, now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.unknown == nil {
		h.unknown = map[string]time.Time{}
	}
	if len(h.unknown) >= hookMissKeys {
		for k, until := range h.unknown {
			if !now.Before(until) {
				delete(h.unknown, k)
			}
		}
	}
	if len(h.unknown) >= hookMissKeys {
		clear(h.unknown) // a flood of made-up keys: start over, each costs a shared catch-up again
	}
	h.unknown[key] = now.Add(hookMissTTL)
}

// catchUpGate shares catch-ups between concurrent callers: Do returns
// the result of a run that started after Do was called, starting one when
// none runs, else waiting for the one after the running one (which the
// first waiter starts). The zero value is ready.
type catchUpGate struct {
	mu      sync.Mutex
	started uint64 // runs started
	done    uint64 // the number of the last run that finished
	running bool
	recs    []*sentinel.Sentinel
	err     error
	wake    chan struct{} // closed when a run finishes
	waiting int
}

// Do waits for a run of run that started after the call and returns its
// result. run gets a context of its own, bounded by hookCatchUpTimeout
// (a caller that gives up does not fail the others). Past
// hookMissWaiters callers waiting it answers unavailable.
func (g *catchUpGate) Do(ctx context.Context, run func(ctx context.Context) ([]*sentinel.Sentinel, error)) ([]*sentinel.Sentinel, error) {
	g.mu.Lock()
	need := g.started + 1
	for {
		if g.done >= need {
			recs, err := g.recs, g.err
			g.mu.Unlock()
			return recs, err
		}
		if !g.running {
			g.running = true
			g.started++
			g.mu.Unlock()
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), hookCatchUpTimeout)
			recs, err := run(rctx)
			cancel()
			g.mu.Lock()
			g.running, g.done, g.recs, g.err = false, g.started, recs, err
			if g.wake != nil {
				close(g.wake)
				g.wake = nil
			}
			continue
		}
		if g.waiting >= hookMissWaiters {
			g.mu.Unlock()
			return nil, sentinel.Errorf(sentinel.CodeUnavailable, "too many unknown hook keys at once; retry later")
		}
		if g.wake == nil {
			g.wake = make(chan struct{})
		}
		wake := g.wake
		g.waiting++
		g.mu.Unlock()
		select {
		case <-ctx.Done():
			g.mu.Lock()
			g.waiting--
			g.mu.Unlock()
			return nil, ctx.Err()
		case <-wake:
		}
		g.mu.Lock()
		g.waiting--
	}
}

// waiters is how many callers wait (tests).
func (g *catchUpGate) waiters() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.waiting
}
