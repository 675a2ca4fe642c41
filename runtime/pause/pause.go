// Package pause gives tests named points in production code where they
// can hold a goroutine, watch it pass, or make it fail, so that an
// interleaving (node A reaches point P, node B runs to completion, A
// resumes) is scripted instead of left to luck (docs/RELIABILITY.md,
// "Interleavings tested").
//
// Production code holds a *Points that is nil outside tests and calls At at
// each named point; on a nil *Points At is one nil check and returns nil,
// so an unused point costs nothing. Each component (a pipeline, a poll
// loop, a registry) has Points of its own, so two "nodes" wired in one test
// process are held independently.
package pause

import (
	"context"
	"errors"
	"sync"
)

// Point names a place in the code. Each package that calls At declares its
// points as constants beside the code that reaches them.
type Point string

// Points is the set of holds a test arranged for one component. The zero
// value is not used; New returns one. A nil *Points holds nothing.
type Points struct {
	mu    sync.Mutex
	rules []*Hold // mu must be held
}

// New returns an empty set of points.
func New() *Points { return &Points{} }

// Hold is one arrangement at a point: the goroutines that reach it (for
// the key it was made for) are counted and, unless it only watches, held
// until Release; a failing hold returns its error from At instead.
type Hold struct {
	pt   Point
	key  string
	keep bool // hold every arrival, not only the first
	// block: arrivals wait for Release; err: arrivals get it from At.
	block bool
	err   error
	times int // how many arrivals are still failed (err); <0: all

	mu      sync.Mutex
	n       int           // arrivals so far (mu must be held)
	reached chan struct{} // closed at the first arrival
	release chan struct{} // closed by Release
	relOnce sync.Once
	arrived chan struct{} // one value per arrival, never blocks the caller
}

// ErrInjected is the error a Fail hold returns when none was given.
var ErrInjected = errors.New("pause: failure injected at a named point")

// Hold holds the first goroutine that reaches pt (for key; "" matches any
// key) until Release; later arrivals pass.
func (p *Points) Hold(pt Point, key string) *Hold {
	return p.add(&Hold{pt: pt, key: key, block: true})
}

// Watch counts and signals the arrivals at pt (for key) without holding
// them.
func (p *Points) Watch(pt Point, key string) *Hold {
	return p.add(&Hold{pt: pt, key: key, keep: true})
}

// Fail makes the next times arrivals at pt (for key; times < 0: every
// arrival) return err from At (ErrInjected when nil): a write that never
// happened, a crash between two writes, an election.
func (p *Points) Fail(pt Point, key string, times int, err error) *Hold {
	if err == nil {
		err = ErrInjected
	}
	return p.add(&Hold{pt: pt, key: key, keep: true, err: err, times: times})
}

func (p *Points) add(h *Hold) *Hold {
	h.reached = make(chan struct{})
	h.release = make(chan struct{})
	h.arrived = make(chan struct{}, 1024)
	p.mu.Lock()
	p.rules = append(p.rules, h)
	p.mu.Unlock()
	return h
}

// At is called by production code at point pt for key (an event, a
// sentinel, a session: what a test tells arrivals apart by). It returns at
// once on a nil *Points or when no hold matches; a matching hold counts the
// arrival, then holds it until Release or ctx ends (the error is then
// ctx's cause), or returns the hold's injected error.
func (p *Points) At(ctx context.Context, pt Point, key string) error {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	var matched []*Hold
	for _, h := range p.rules {
		if h.pt == pt && (h.key == "" || h.key == key) {
			matched = append(matched, h)
		}
	}
	p.mu.Unlock()
	for _, h := range matched {
		if err := h.arrive(ctx); err != nil {
			return err
		}
	}
	return nil
}

func (h *Hold) arrive(ctx context.Context) error {
	h.mu.Lock()
	first := h.n == 0
	h.n++
	if !h.keep && !first {
		h.mu.Unlock()
		return nil
	}
	var err error
	if h.err != nil && h.times != 0 {
		err = h.err
		if h.times > 0 {
			h.times--
		}
	}
	h.mu.Unlock()
	if first {
		close(h.reached)
	}
	select {
	case h.arrived <- struct{}{}:
	default:
	}
	if err != nil {
		return err
	}
	if !h.block {
		return nil
	}
	select {
	case <-h.release:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// Reached is closed once a goroutine reached the point.
func (h *Hold) Reached() <-chan struct{} { return h.reached }

// Arrived receives one value per arrival (up to a buffer of 1024 not yet
// received).
func (h *Hold) Arrived() <-chan struct{} { return h.arrived }

// Count is how many goroutines reached the point so far.
func (h *Hold) Count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n
}

// Release lets the held goroutine (and any later one) go on. Idempotent.
func (h *Hold) Release() { h.relOnce.Do(func() { close(h.release) }) }
