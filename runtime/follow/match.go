package follow

import (
	"strings"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/runtime/sessions"
)

// Lookup returns a session's current descriptor, nil when unknown.
type Lookup func(id string) *sessions.Session

// Wants reports the kind a follow receives an event as, or false when the
// follow does not want it (the session follows guide: matching a follow
// against an event): a turn-end that left the
// session awaiting input reads as awaiting-input when subscribed; an empty
// turn is dropped under skipEmptyTurns unless it is awaiting input.
func Wants(f *sentinel.Follow, ev *sessions.LifecycleEvent) (string, bool) {
	if ev.Kind != sentinel.FollowTurnEnd {
		return ev.Kind, wantsKind(f, ev.Kind)
	}
	if ev.AwaitingInput && wantsKind(f, sentinel.FollowAwaitingInput) {
		return sentinel.FollowAwaitingInput, true
	}
	if !wantsKind(f, sentinel.FollowTurnEnd) {
		return "", false
	}
	if ev.Empty && f.SkipEmptyTurns && !ev.AwaitingInput {
		return "", false
	}
	return sentinel.FollowTurnEnd, true
}

// Covers reports whether the follow's selector covers the event's session,
// read at event time (the session follows guide: matching a follow against
// an event, steps in order).
func Covers(f *sentinel.Follow, ev *sessions.LifecycleEvent, lookup Lookup) bool {
	id := ev.SessionID
	if id == f.Follower {
		return false
	}
	desc := lookup(id)
	if f.Exclude != nil {
		if contains(f.Exclude.SessionIDs, id) {
			return false
		}
		label := ev.Label
		if desc != nil && desc.Label != "" {
			label = desc.Label
		}
		if label != "" && contains(f.Exclude.Labels, label) {
			return false
		}
	}
	descendant := isDescendant(desc, f.Follower, lookup)
	if descendant && f.ExcludeFollowerChildren {
		return false
	}
	if contains(f.Selector.SessionIDs, id) {
		return true
	}
	broad := f.Selector.All || f.Selector.CwdPrefix != ""
	if descendant && broad {
		return true
	}
	if !broad {
		return false
	}
	if f.Selector.CwdPrefix != "" {
		if desc == nil || !UnderPath(desc.Cwd, f.Selector.CwdPrefix) {
			return false
		}
	}
	if rootsOnly(f) && desc != nil && desc.ParentSessionID != "" {
		return false
	}
	return true
}

// isDescendant walks parentSessionId up (at most 32 hops) looking for
// ancestor.
func isDescendant(desc *sessions.Session, ancestor string, lookup Lookup) bool {
	seen := map[string]bool{}
	for hop := 0; desc != nil && hop < 32; hop++ {
		p := desc.ParentSessionID
		if p == "" || seen[p] {
			return false
		}
		if p == ancestor {
			return true
		}
		seen[p] = true
		desc = lookup(p)
	}
	return false
}

// UnderPath reports whether cwd is prefix or below it on a path boundary
// (trailing slashes trimmed; a missing cwd never matches).
func UnderPath(cwd, prefix string) bool {
	if cwd == "" {
		return false
	}
	cwd = trimSlash(cwd)
	prefix = trimSlash(prefix)
	if prefix == "" {
		return strings.HasPrefix(cwd, "/") || cwd == ""
	}
	return cwd == prefix || strings.HasPrefix(cwd, prefix+"/")
}

func trimSlash(p string) string {
	for len(p) > 1 && strings.HasSuffix(p, "/") {
		p = strings.TrimSuffix(p, "/")
	}
	if p == "/" {
		return ""
	}
	return p
}
