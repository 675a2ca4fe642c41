package poll

import (
	"context"

	"github.com/agentproto/sentinel"
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

// admitted asks the budget, when there is one, for the poll of rec.
func (l *Loop) admitted(ctx context.Context, rec *sentinel.Sentinel) bool {
	return l.Budget == nil || l.Budget.Admit(ctx, rec.Provider, rec.Handle, interactive(ctx))
}
