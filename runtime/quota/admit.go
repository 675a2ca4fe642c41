package quota

import (
	"context"
	"time"

	"github.com/agentproto/sentinel"
)

// Admit reports whether the poll of a sentinel of provider (handle h) may
// spend its credential's quota now; interactive is a poll a caller asked
// for (poll now), which may spend the reserve. A credential paused by a secondary
// limit admits nothing until the pause ends; a window past its reset, or a
// credential not seen yet, admits; else a poll needs remaining points
// above the reserve (an interactive call may spend the reserve, not the
// last point) and, paced, its turn: this node's share of what is left is
// spread over the time to the reset. An admitted poll counts one point
// against this node's view until GitHub's next answer says what is left
// (a 304 to a conditional request costs none). A refused poll is counted (Throttled).
func (g *Governor) Admit(_ context.Context, provider string, h sentinel.Handle, interactive bool) bool {
	if g == nil || g.cfg.CredentialOf == nil {
		return true
	}
	cred, res, ok := g.cfg.CredentialOf(provider, h)
	if !ok {
		return true
	}
	if res == "" {
		res = "core"
	}
	if g.admit(key(cred, res), interactive) {
		return true
	}
	g.throttled.Add(1)
	return false
}

func (g *Governor) admit(k string, interactive bool) bool {
	now := g.cfg.Now()
	g.mu.Lock()
	defer g.mu.Unlock()
	b := g.budgets[k]
	switch {
	case b == nil:
		return true
	case b.Paused(now):
		return false
	case b.Remaining < 0 || b.Limit <= 0 || !now.Before(b.Reset):
		return true // nothing known of this window yet, or a new window
	}
	left := b.Remaining - b.inflight
	if !interactive {
		left -= b.reserve(g.cfg.ReserveFraction, g.cfg.ReserveLeast)
	}
	if left <= 0 {
		return false
	}
	if !interactive {
		if now.Before(g.next[k]) {
			return false
		}
		nodes := max(g.cfg.Nodes(), 1)
		g.next[k] = now.Add(b.Reset.Sub(now) * time.Duration(nodes) / time.Duration(left))
	}
	b.inflight++
	return true
}
