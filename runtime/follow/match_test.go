package follow_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/runtime/follow"
	"github.com/agentproto/sentinel/runtime/sessions"
)

func b(v bool) *bool { return &v }

func TestCovers(t *testing.T) {
	descs := map[string]*sessions.Session{
		"chief":      {Session: sentinel.Session{ID: "chief", Cwd: "/home/u"}},
		"root":       {Session: sentinel.Session{ID: "root", Cwd: "/home/u/proj/sub", Label: "builder"}},
		"other":      {Session: sentinel.Session{ID: "other", Cwd: "/home/u/proj-other"}},
		"kid":        {Session: sentinel.Session{ID: "kid", Cwd: "/tmp/x", ParentSessionID: "root"}},
		"chief-kid":  {Session: sentinel.Session{ID: "chief-kid", Cwd: "/tmp/y", ParentSessionID: "chief"}},
		"chief-gkid": {Session: sentinel.Session{ID: "chief-gkid", Cwd: "/tmp/z", ParentSessionID: "chief-kid"}},
		"noisy":      {Session: sentinel.Session{ID: "noisy", Cwd: "/home/u/proj", Label: "noise"}},
		"nocwd":      {Session: sentinel.Session{ID: "nocwd"}},
	}
	lookup := func(id string) *sessions.Session { return descs[id] }
	all := sentinel.Follow{Follower: "chief", Selector: sentinel.FollowSelector{All: true, RootOnly: b(true)}, ExcludeFollowerChildren: true}
	allKids := all
	allKids.ExcludeFollowerChildren = false
	allNotRoot := all
	allNotRoot.Selector.RootOnly = b(false)
	cwd := sentinel.Follow{Follower: "chief", Selector: sentinel.FollowSelector{CwdPrefix: "/home/u/proj/", RootOnly: b(false)}, ExcludeFollowerChildren: true}
	cwdKids := cwd
	cwdKids.ExcludeFollowerChildren = false
	ids := sentinel.Follow{Follower: "chief", Selector: sentinel.FollowSelector{SessionIDs: []string{"kid", "chief", "chief-kid"}, RootOnly: b(false)}, ExcludeFollowerChildren: false}
	idsNoKids := ids
	idsNoKids.ExcludeFollowerChildren = true
	excl := all
	excl.Exclude = &sentinel.FollowExclude{SessionIDs: []string{"other"}, Labels: []string{"noise"}}
	exclEventLabel := all
	exclEventLabel.Exclude = &sentinel.FollowExclude{Labels: []string{"late-label"}}

	cases := []struct {
		name    string
		f       sentinel.Follow
		session string
		label   string
		want    bool
	}{
		{"all covers a root session", all, "root", "", true},
		{"all is root-only by default", all, "kid", "", false},
		{"all with rootOnly false covers children", allNotRoot, "kid", "", true},
		{"all covers sessions never seen before (event time)", all, "brand-new", "", true},
		{"the follower never gets its own events", all, "chief", "", false},
		{"explicit ids never include the follower", ids, "chief", "", false},
		{"follower children excluded by default", allNotRoot, "chief-kid", "", false},
		{"follower grandchildren excluded by default", allNotRoot, "chief-gkid", "", false},
		{"children opted in under all bypass rootOnly", allKids, "chief-gkid", "", true},
		{"children opted in under cwdPrefix bypass the prefix", cwdKids, "chief-kid", "", true},
		{"children excluded even when named", idsNoKids, "chief-kid", "", false},
		{"named children delivered when opted in", ids, "chief-kid", "", true},
		{"explicit ids always match, whatever the parentage", ids, "kid", "", true},
		{"explicit ids do not match others", ids, "root", "", false},
		{"cwdPrefix matches below the prefix", cwd, "root", "", true},
		{"cwdPrefix matches the prefix itself", cwd, "noisy", "", true},
		{"cwdPrefix respects path boundaries", cwd, "other", "", false},
		{"cwdPrefix alone is not root-only", sentinel.Follow{Follower: "chief", Selector: sentinel.FollowSelector{CwdPrefix: "/tmp", RootOnly: b(false)}, ExcludeFollowerChildren: true}, "kid", "", true},
		{"a missing cwd never matches a prefix", cwd, "nocwd", "", false},
		{"exclude ids", excl, "other", "", false},
		{"exclude labels from the descriptor", excl, "noisy", "", false},
		{"exclude labels from the event when the descriptor has none", exclEventLabel, "brand-new", "late-label", false},
		{"exclude leaves others alone", excl, "root", "", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ev := sessions.LifecycleEvent{Kind: sentinel.FollowTurnEnd, SessionID: tc.session, Label: tc.label}
			require.Equal(t, tc.want, follow.Covers(&tc.f, &ev, lookup))
		})
	}
}

func TestWants(t *testing.T) {
	allEvents := sentinel.Follow{Events: follow.Events(), SkipEmptyTurns: true}
	onlyTurns := sentinel.Follow{Events: []string{"turn-end"}, SkipEmptyTurns: true}
	keepEmpty := sentinel.Follow{Events: follow.Events(), SkipEmptyTurns: false}
	onlyPR := sentinel.Follow{Events: []string{"pr-merged"}, SkipEmptyTurns: true}
	cases := []struct {
		name string
		f    sentinel.Follow
		ev   sessions.LifecycleEvent
		kind string
		ok   bool
	}{
		{"turn-end", allEvents, sessions.LifecycleEvent{Kind: "turn-end"}, "turn-end", true},
		{"an awaiting turn reads as awaiting-input", allEvents, sessions.LifecycleEvent{Kind: "turn-end", AwaitingInput: true}, "awaiting-input", true},
		{"with only turn-end it stays turn-end", onlyTurns, sessions.LifecycleEvent{Kind: "turn-end", AwaitingInput: true}, "turn-end", true},
		{"empty turns are dropped by default", allEvents, sessions.LifecycleEvent{Kind: "turn-end", Empty: true}, "", false},
		{"empty awaiting turns are kept", onlyTurns, sessions.LifecycleEvent{Kind: "turn-end", Empty: true, AwaitingInput: true}, "turn-end", true},
		{"empty turns kept on request", keepEmpty, sessions.LifecycleEvent{Kind: "turn-end", Empty: true}, "turn-end", true},
		{"unsubscribed kinds are dropped", onlyPR, sessions.LifecycleEvent{Kind: "crashed"}, "crashed", false},
		{"subscribed kinds pass", onlyPR, sessions.LifecycleEvent{Kind: "pr-merged"}, "pr-merged", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			kind, ok := follow.Wants(&tc.f, &tc.ev)
			require.Equal(t, tc.ok, ok)
			if ok {
				require.Equal(t, tc.kind, kind)
			}
		})
	}
}

func TestUnderPath(t *testing.T) {
	cases := []struct {
		cwd, prefix string
		want        bool
	}{
		{"/home/u/proj", "/home/u/proj", true},
		{"/home/u/proj/", "/home/u/proj", true},
		{"/home/u/proj/a/b", "/home/u/proj/", true},
		{"/home/u/proj-other", "/home/u/proj", false},
		{"/home/u", "/home/u/proj", false},
		{"", "/home", false},
		{"/anything", "/", true},
	}
	for _, tc := range cases {
		t.Run(tc.cwd+"|"+tc.prefix, func(t *testing.T) {
			require.Equal(t, tc.want, follow.UnderPath(tc.cwd, tc.prefix))
		})
	}
}
