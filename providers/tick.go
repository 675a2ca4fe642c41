package providers

import (
	"context"
	"sync"
)

// Tick is the scratch space of one poll tick, shared by every Poll of that
// tick: a provider keeps per-tick caches in it (local-gh makes each GET
// once per tick however many sentinels watch the same PR or repository).
// The poll loop starts one per tick (WithTick); a Poll outside a tick (a
// test, a one-off call) finds none and caches nothing. A Tick ends with
// its tick: nothing in it outlives the polls that shared it. It is safe for
// concurrent use.
type Tick struct {
	mu   sync.Mutex
	vals map[any]any
}

type tickKey struct{}

// WithTick returns ctx carrying a fresh Tick.
func WithTick(ctx context.Context) context.Context {
	return context.WithValue(ctx, tickKey{}, &Tick{vals: map[any]any{}})
}

// TickOf returns the Tick ctx carries, or nil outside a tick.
func TickOf(ctx context.Context) *Tick {
	t, _ := ctx.Value(tickKey{}).(*Tick)
	return t
}

// Value returns the value stored under key, storing mk() first when there
// is none. Keys should be unexported types of the provider's own package,
// as context keys are.
func (t *Tick) Value(key any, mk func() any) any {
	t.mu.Lock()
	defer t.mu.Unlock()
	v, ok := t.vals[key]
	if !ok {
		v = mk()
		t.vals[key] = v
	}
	return v
}
