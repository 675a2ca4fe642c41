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
// last point) and, paced, its turn: every point the credential's answers
// spend on this node (Observe) moves the turn on by this node's share of
// the time to the reset over the points left above the reserve, so a poll
// answered 304 (no point) moves it not at all and one that spent several
// points waits for as many turns. A refused poll is counted (Throttled).
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
	case !b.windowKnown(now):
		return true // nothing known of this window yet, or a new window
	case interactive:
		return b.Remaining > 0
	}
	return b.Remaining-b.reserve(g.cfg.ReserveFraction, g.cfg.ReserveLeast) > 0 && !now.Before(g.next[k])
}

// spent moves the paced turn of k on by points spent at now (mu must be
// held; b is the budget of k with the answer's numbers merged in): each
// point costs this node's share of the time to the reset over the points
// left above the reserve. The turn never banks unspent time: a credential
// quiet for a while does not earn a burst.
func (g *Governor) spent(k string, b *Budget, points int, now time.Time) {
	if points <= 0 || !b.windowKnown(now) {
		return
	}
	left := max(b.Remaining-b.reserve(g.cfg.ReserveFraction, g.cfg.ReserveLeast), 1)
	nodes := max(g.cfg.Nodes(), 1)
	step := b.Reset.Sub(now) * time.Duration(nodes) / time.Duration(left)
	from := g.next[k]
	if from.Before(now) {
		from = now
	}
	g.next[k] = from.Add(step * time.Duration(points))
}
