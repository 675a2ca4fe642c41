package follow

import (
	"fmt"

	"github.com/agentproto/sentinel"
)

// Defaults and limits of a follow (the session follows guide's follow record).
const (
	DefaultBatchMs = 15000
	MaxBatchMs     = 600000
	MaxKeyLen      = 200
	MaxListLen     = 500
)

// Events lists the six follow events in their canonical order.
func Events() []string {
	return []string{sentinel.FollowTurnEnd, sentinel.FollowAwaitingInput, sentinel.FollowExited, sentinel.FollowCrashed, sentinel.FollowPROpened, sentinel.FollowPRMerged}
}

// rootsOnly reports whether the follow covers root sessions only.
func rootsOnly(f *sentinel.Follow) bool { return f.Selector.RootOnly != nil && *f.Selector.RootOnly }

// wantsKind reports whether the follow asked for the event kind.
func wantsKind(f *sentinel.Follow, kind string) bool {
	for _, e := range f.Events {
		if e == kind {
			return true
		}
	}
	return false
}

// normalize validates a request into a follow (without id, follower
// existence or createdAt). Errors: invalid_input, invalid_selector,
// no_follower.
func normalize(req sentinel.FollowRequest, caller string) (sentinel.Follow, error) {
	bad := func(format string, args ...any) (sentinel.Follow, error) {
		return sentinel.Follow{}, sentinel.Errorf(sentinel.CodeInvalidInput, format, args...)
	}
	f := sentinel.Follow{Key: req.Key, Follower: req.Follower}
	if f.Follower == "" {
		f.Follower = caller
	}
	if len(req.Key) > MaxKeyLen {
		return bad("key: must be 1 to %d characters", MaxKeyLen)
	}
	sel := req.Selector
	ids, err := cleanList("selector.sessionIds", sel.SessionIDs)
	if err != nil {
		return sentinel.Follow{}, err
	}
	ex := mergeExclude(req.Exclude, sel.Exclude)
	var exIDs, exLabels []string
	if ex != nil {
		if exIDs, err = cleanList("exclude.sessionIds", ex.SessionIDs); err != nil {
			return sentinel.Follow{}, err
		}
		if exLabels, err = cleanList("exclude.labels", ex.Labels); err != nil {
			return sentinel.Follow{}, err
		}
	}
	events := []string{}
	seen := map[string]bool{}
	for _, e := range req.Events {
		if !contains(Events(), e) {
			return bad("events: %q is not one of turn-end, awaiting-input, exited, crashed, pr-opened, pr-merged", e)
		}
		if !seen[e] {
			seen[e] = true
			events = append(events, e)
		}
	}
	if len(events) == 0 {
		events = Events()
	}
	f.Events = events
	f.BatchMs = DefaultBatchMs
	if req.BatchMs != nil {
		if *req.BatchMs < 0 || *req.BatchMs > MaxBatchMs {
			return bad("batchMs: must be an integer within 0..%d", MaxBatchMs)
		}
		f.BatchMs = *req.BatchMs
	}
	f.SkipEmptyTurns = req.SkipEmptyTurns == nil || *req.SkipEmptyTurns
	f.ExcludeFollowerChildren = req.ExcludeFollowerChildren == nil || *req.ExcludeFollowerChildren
	if f.Follower == "" {
		return sentinel.Follow{}, sentinel.Errorf(sentinel.CodeNoFollower, "no follower: pass follower (HTTP callers have no session identity)")
	}
	if !sentinel.ValidSessionID(f.Follower) {
		return bad("follower: %q must be "+sentinel.SessionIDRule, f.Follower)
	}
	if len(ids) == 0 && !sel.All && sel.CwdPrefix == "" {
		return sentinel.Follow{}, sentinel.Errorf(sentinel.CodeInvalidSelector, "selector needs at least one of sessionIds (non-empty), all: true, cwdPrefix")
	}
	rootOnly := sel.All
	if sel.RootOnly != nil {
		rootOnly = *sel.RootOnly
	}
	f.Selector = sentinel.FollowSelector{SessionIDs: ids, All: sel.All, CwdPrefix: sel.CwdPrefix, RootOnly: &rootOnly}
	if len(exIDs) > 0 || len(exLabels) > 0 {
		f.Exclude = &sentinel.FollowExclude{SessionIDs: exIDs, Labels: exLabels}
	}
	return f, nil
}

func mergeExclude(a, b *sentinel.FollowExclude) *sentinel.FollowExclude {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	return &sentinel.FollowExclude{SessionIDs: append(append([]string(nil), a.SessionIDs...), b.SessionIDs...), Labels: append(append([]string(nil), a.Labels...), b.Labels...)}
}

// cleanList checks and dedupes a list (at most MaxListLen entries, each
// non-empty); an empty list becomes nil.
func cleanList(path string, in []string) ([]string, error) {
	if len(in) > MaxListLen {
		return nil, sentinel.Errorf(sentinel.CodeInvalidInput, "%s: at most %d entries", path, MaxListLen)
	}
	var out []string
	seen := map[string]bool{}
	for i, s := range in {
		if s == "" {
			return nil, sentinel.Errorf(sentinel.CodeInvalidInput, "%s.%s: must not be empty", path, fmt.Sprint(i))
		}
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
