package follow

import (
	"fmt"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/runtime/sessions"
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
	return []string{sessions.KindTurnEnd, sessions.KindAwaitingInput, sessions.KindExited, sessions.KindCrashed, sessions.KindPROpened, sessions.KindPRMerged}
}

// Exclude never delivers these sessions.
type Exclude struct {
	SessionIDs []string `json:"sessionIds,omitempty"`
	Labels     []string `json:"labels,omitempty"`
}

// Selector picks the followed sessions.
type Selector struct {
	SessionIDs []string `json:"sessionIds,omitempty"`
	All        bool     `json:"all,omitempty"`
	CwdPrefix  string   `json:"cwdPrefix,omitempty"`
	RootOnly   *bool    `json:"rootOnly,omitempty"`
	Exclude    *Exclude `json:"exclude,omitempty"`
}

// Follow is a stored follow. RootOnly is stored resolved.
type Follow struct {
	ID                      string   `json:"id"`
	Key                     string   `json:"key,omitempty"`
	Follower                string   `json:"follower"`
	CreatedAt               string   `json:"createdAt"`
	Selector                Selector `json:"selector"`
	Exclude                 *Exclude `json:"exclude,omitempty"`
	Events                  []string `json:"events"`
	BatchMs                 int      `json:"batchMs"`
	SkipEmptyTurns          bool     `json:"skipEmptyTurns"`
	ExcludeFollowerChildren bool     `json:"excludeFollowerChildren"`
}

// Request is a session_follow call / POST /follows body.
type Request struct {
	Follower                string   `json:"follower,omitempty"`
	Key                     string   `json:"key,omitempty"`
	Selector                Selector `json:"selector"`
	Exclude                 *Exclude `json:"exclude,omitempty"`
	Events                  []string `json:"events,omitempty"`
	BatchMs                 *int     `json:"batchMs,omitempty"`
	SkipEmptyTurns          *bool    `json:"skipEmptyTurns,omitempty"`
	ExcludeFollowerChildren *bool    `json:"excludeFollowerChildren,omitempty"`
}

func (f *Follow) rootOnly() bool { return f.Selector.RootOnly != nil && *f.Selector.RootOnly }

func (f *Follow) wantsKind(kind string) bool {
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
func normalize(req Request, caller string) (Follow, error) {
	bad := func(format string, args ...any) (Follow, error) {
		return Follow{}, sentinel.Errorf(sentinel.CodeInvalidInput, format, args...)
	}
	f := Follow{Key: req.Key, Follower: req.Follower}
	if f.Follower == "" {
		f.Follower = caller
	}
	if len(req.Key) > MaxKeyLen {
		return bad("key: must be 1 to %d characters", MaxKeyLen)
	}
	sel := req.Selector
	ids, err := cleanList("selector.sessionIds", sel.SessionIDs)
	if err != nil {
		return Follow{}, err
	}
	ex := mergeExclude(req.Exclude, sel.Exclude)
	var exIDs, exLabels []string
	if ex != nil {
		if exIDs, err = cleanList("exclude.sessionIds", ex.SessionIDs); err != nil {
			return Follow{}, err
		}
		if exLabels, err = cleanList("exclude.labels", ex.Labels); err != nil {
			return Follow{}, err
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
		return Follow{}, sentinel.Errorf(sentinel.CodeNoFollower, "no follower: pass follower (HTTP callers have no session identity)")
	}
	if !sentinel.ValidSessionID(f.Follower) {
		return bad("follower: %q must be "+sentinel.SessionIDRule, f.Follower)
	}
	if len(ids) == 0 && !sel.All && sel.CwdPrefix == "" {
		return Follow{}, sentinel.Errorf(sentinel.CodeInvalidSelector, "selector needs at least one of sessionIds (non-empty), all: true, cwdPrefix")
	}
	rootOnly := sel.All
	if sel.RootOnly != nil {
		rootOnly = *sel.RootOnly
	}
	f.Selector = Selector{SessionIDs: ids, All: sel.All, CwdPrefix: sel.CwdPrefix, RootOnly: &rootOnly}
	if len(exIDs) > 0 || len(exLabels) > 0 {
		f.Exclude = &Exclude{SessionIDs: exIDs, Labels: exLabels}
	}
	return f, nil
}

func mergeExclude(a, b *Exclude) *Exclude {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	return &Exclude{SessionIDs: append(append([]string(nil), a.SessionIDs...), b.SessionIDs...), Labels: append(append([]string(nil), a.Labels...), b.Labels...)}
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
