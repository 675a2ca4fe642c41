package sessions

import (
	"context"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/runtime/sentinels"
)

// Checker implements sentinels.SessionChecker over the registry: a known
// session that has ended is session_not_alive; unknown sessions are
// allowed (harnesses may register later).
type Checker struct{ registry *Registry }

// NewChecker returns the checker over reg.
func NewChecker(reg *Registry) Checker { return Checker{registry: reg} }

// CheckTarget implements sentinels.SessionChecker.
func (c Checker) CheckTarget(ctx context.Context, id string) error {
	s, err := c.registry.Lookup(ctx, id)
	if err != nil {
		return sentinel.Wrap(sentinel.CodeCreateFailed, err, "reading the session registry failed")
	}
	if s == nil || s.Alive(c.registry.Now()) {
		return nil
	}
	reason := firstNonEmpty(s.Effective(c.registry.Now()).EndedReason, "ended")
	if s.Forgotten {
		reason = ReasonForgotten
	}
	return sentinel.Errorf(sentinel.CodeSessionNotAlive, "session %q is not alive (status=ended, reason=%s)", id, reason)
}

var _ sentinels.SessionChecker = Checker{}
