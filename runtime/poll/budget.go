package poll

import (
	"context"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
)

// Budget admits polls within a spending budget: the GitHub quota governor
// (runtime/quota) keeps a reserve for interactive calls and spreads polls
// over the rate-limit window. A refused poll is skipped this tick and
// tried again at the next; the governor counts it.
type Budget interface {
	// Admit reports whether the poll of a sentinel of provider (handle h)
	// may run now; interactive marks a poll a caller asked for (poll now).
	Admit(ctx context.Context, provider string, h sentinel.Handle, interactive bool) bool
}

// interactiveKey marks the context of a tick a caller asked for.
type interactiveKey struct{}

func withInteractive(ctx context.Context) context.Context {
	return context.WithValue(ctx, interactiveKey{}, true)
}

func interactive(ctx context.Context) bool { v, _ := ctx.Value(interactiveKey{}).(bool); return v }

// admitted asks the budget, when there is one, for the poll of rec (a
// provider that does not poll is not asked).
func (l *Loop) admitted(ctx context.Context, rec *sentinel.Sentinel) bool {
	if l.budget == nil {
		return true
	}
	prov, ok := l.registry.Get(rec.Provider)
	if !ok || !prov.Capabilities().Poll {
		return true
	}
	if _, ok := prov.(providers.Poller); !ok {
		return true
	}
	return l.budget.Admit(ctx, rec.Provider, rec.Handle, interactive(ctx))
}

// startOf is where a tick over n records starts: 0 without a budget, else
// the turn the last tick left.
func (l *Loop) startOf(n int) int {
	if l.budget == nil || n == 0 {
		return 0
	}
	return int(l.turn.Load() % int64(n))
}

// nextTurn records where the next tick starts: at the first record the
// budget refused (refused >= 0), else where this one started.
func (l *Loop) nextTurn(refused int) {
	if refused >= 0 {
		l.turn.Store(int64(refused))
	}
}
