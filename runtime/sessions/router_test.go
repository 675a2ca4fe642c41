package sessions_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus/bustest"
	"github.com/agentproto/sentinel/runtime/runtimetest"
	"github.com/agentproto/sentinel/runtime/sessions"
)

var subjectN atomic.Int64

// fire watches a fresh subject for target, emits one event, polls, and
// waits until the pipeline handled it. It returns the sentinel as stored.
func fire(t *testing.T, e *env, target string) *sentinel.Sentinel {
	t.Helper()
	subj := fmt.Sprintf("github:acme/r%d#1", subjectN.Add(1))
	rec := e.Watch(sentinel.WatchRequest{Subject: subj, SessionID: target, Types: []string{"*"}, Provider: "fake"})
	fireOn(t, e, rec, "evt_1")
	return e.Get(rec.ID)
}

func fireOn(t *testing.T, e *env, rec *sentinel.Sentinel, evID string) {
	t.Helper()
	before := e.Get(rec.ID).EventCount
	e.Fake.Emit(runtimetest.Event(evID+"_"+rec.ID, "github.check_suite.completed", rec.Spec.Match[0].Subject, false))
	e.Loop.PollNow(context.Background())
	bustest.Eventually(t, 10*time.Second, func() bool { return e.Get(rec.ID).EventCount > before }, "event %s to be handled", evID)
	e.Drained()
}

func parkedReasons(t *testing.T, e *env, id string) []string {
	t.Helper()
	recs, err := e.Park.List(context.Background(), id, 100)
	require.NoError(t, err)
	var out []string
	for _, r := range recs {
		out = append(out, r.Reason)
	}
	return out
}

func TestRouterBranches(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()

	t.Run("unknown session receives normally", func(t *testing.T) {
		rec := fire(t, e, "never-registered")
		require.Len(t, e.InboxOf("never-registered"), 1)
		require.Equal(t, sentinel.StatusActive, rec.Status)
	})
	t.Run("alive session receives", func(t *testing.T) {
		e.register(t, sentinel.RegisterSession{ID: "alive"})
		rec := fire(t, e, "alive")
		require.Len(t, e.InboxOf("alive"), 1)
		require.Equal(t, sentinel.StatusActive, rec.Status)
	})
	t.Run("deliberate end forwards to the live parent as fyi", func(t *testing.T) {
		e.register(t, sentinel.RegisterSession{ID: "parent1"})
		e.register(t, sentinel.RegisterSession{ID: "child1", ParentSessionID: ptr("parent1")})
		rec := e.Watch(sentinel.WatchRequest{Subject: "github:acme/fwd#1", SessionID: "child1", Types: []string{"*"}, Provider: "fake"})
		_, err := e.Reg.End(ctx, "child1", sessions.ReasonOperatorCompleted)
		require.NoError(t, err)
		fireOn(t, e, rec, "evt_1")
		msgs := e.InboxOf("parent1")
		require.Len(t, msgs, 1)
		require.Equal(t, sentinel.UrgencyFYI, msgs[0].Urgency)
		require.True(t, strings.HasPrefix(msgs[0].Text, "[for closed session child1] [github] "), msgs[0].Text)
		require.Empty(t, e.InboxOf("child1"))
		got := e.Get(rec.ID)
		require.Equal(t, sentinel.StatusActive, got.Status)
		require.Equal(t, "child1", got.Spec.Target.SessionID)
	})
	t.Run("deliberate end without a live parent parks and orphans", func(t *testing.T) {
		e.register(t, sentinel.RegisterSession{ID: "parent2"})
		e.register(t, sentinel.RegisterSession{ID: "child2", ParentSessionID: ptr("parent2")})
		rec := e.Watch(sentinel.WatchRequest{Subject: "github:acme/fwd#2", SessionID: "child2", Types: []string{"*"}, Provider: "fake"})
		_, err := e.Reg.End(ctx, "parent2", sessions.ReasonCrashed)
		require.NoError(t, err)
		_, err = e.Reg.End(ctx, "child2", sessions.ReasonOperatorStopped)
		require.NoError(t, err)
		fireOn(t, e, rec, "evt_1")
		require.Equal(t, sentinel.StatusOrphaned, e.Get(rec.ID).Status)
		reasons := parkedReasons(t, e, rec.ID)
		require.Len(t, reasons, 1)
		require.Contains(t, reasons[0], "closed on purpose (operator-stopped)")
		require.Empty(t, e.Fake.Cancels(), "the provider watch is never cancelled because a session died")
	})
	t.Run("deliberate end without a parent parks", func(t *testing.T) {
		e.register(t, sentinel.RegisterSession{ID: "lonely"})
		rec := e.Watch(sentinel.WatchRequest{Subject: "github:acme/lonely#1", SessionID: "lonely", Types: []string{"*"}, Provider: "fake"})
		_, err := e.Reg.End(ctx, "lonely", sessions.ReasonRestarted)
		require.NoError(t, err)
		fireOn(t, e, rec, "evt_1")
		require.Equal(t, sentinel.StatusOrphaned, e.Get(rec.ID).Status)
		require.Contains(t, parkedReasons(t, e, rec.ID)[0], "not resuming")
	})
	t.Run("superseded session hands over to its live successor", func(t *testing.T) {
		e.register(t, sentinel.RegisterSession{ID: "old1"})
		rec := e.Watch(sentinel.WatchRequest{Subject: "github:acme/succ#1", SessionID: "old1", Types: []string{"*"}, Provider: "fake"})
		_, err := e.Reg.ContinueTo(ctx, "old1", "mid1")
		require.NoError(t, err)
		_, err = e.Reg.ContinueTo(ctx, "mid1", "new1")
		require.NoError(t, err)
		_, err = e.Reg.End(ctx, "old1", sessions.ReasonCrashed)
		require.NoError(t, err)
		fireOn(t, e, rec, "evt_1")
		require.Len(t, e.InboxOf("new1"), 1)
		got := e.Get(rec.ID)
		require.Equal(t, "new1", got.Spec.Target.SessionID)
		require.Equal(t, sentinel.StatusActive, got.Status)
	})
	t.Run("dead session is resumed under a new id and the sentinel retargeted", func(t *testing.T) {
		e.register(t, sentinel.RegisterSession{ID: "res1", Hooks: &sentinel.SessionHooks{Resume: &sentinel.Hook{Command: []string{"echo", "res1-b"}}}})
		rec := e.Watch(sentinel.WatchRequest{Subject: "github:acme/res#1", SessionID: "res1", Types: []string{"*"}, Provider: "fake"})
		require.NoError(t, e.Reg.Report(ctx, "res1", sentinel.SessionReport{Kind: sentinel.FollowCrashed, Reason: "oom"}))
		fireOn(t, e, rec, "evt_1")
		require.Len(t, e.InboxOf("res1-b"), 1)
		got := e.Get(rec.ID)
		require.Equal(t, "res1-b", got.Spec.Target.SessionID)
		require.Equal(t, sentinel.StatusActive, got.Status)
		old, err := e.Reg.Lookup(ctx, "res1")
		require.NoError(t, err)
		require.Equal(t, "res1-b", old.ContinuedTo)
	})
	t.Run("resumed in place keeps the target", func(t *testing.T) {
		e.register(t, sentinel.RegisterSession{ID: "res2", Hooks: &sentinel.SessionHooks{Resume: &sentinel.Hook{Command: []string{"true"}}}})
		rec := e.Watch(sentinel.WatchRequest{Subject: "github:acme/res#2", SessionID: "res2", Types: []string{"*"}, Provider: "fake"})
		require.NoError(t, e.Reg.Report(ctx, "res2", sentinel.SessionReport{Kind: sentinel.FollowExited}))
		fireOn(t, e, rec, "evt_1")
		require.Len(t, e.InboxOf("res2"), 1)
		require.Equal(t, "res2", e.Get(rec.ID).Spec.Target.SessionID)
		s, err := e.Reg.Get(ctx, "res2")
		require.NoError(t, err)
		require.Equal(t, sentinel.SessionRunning, s.Status)
	})
	t.Run("failed resume parks, and the next delivery flips back to active", func(t *testing.T) {
		e.register(t, sentinel.RegisterSession{ID: "res3", Hooks: &sentinel.SessionHooks{Resume: &sentinel.Hook{Command: []string{"false"}}}})
		rec := e.Watch(sentinel.WatchRequest{Subject: "github:acme/res#3", SessionID: "res3", Types: []string{"*"}, Provider: "fake"})
		require.NoError(t, e.Reg.Report(ctx, "res3", sentinel.SessionReport{Kind: sentinel.FollowCrashed}))
		fireOn(t, e, rec, "evt_1")
		require.Equal(t, sentinel.StatusOrphaned, e.Get(rec.ID).Status)
		require.Contains(t, parkedReasons(t, e, rec.ID)[0], "could not resume session res3")
		e.register(t, sentinel.RegisterSession{ID: "res3"})
		fireOn(t, e, rec, "evt_2")
		require.Len(t, e.InboxOf("res3"), 1)
		require.Equal(t, sentinel.StatusActive, e.Get(rec.ID).Status)
	})
	t.Run("dead session without a resume hook parks", func(t *testing.T) {
		e.register(t, sentinel.RegisterSession{ID: "nohook"})
		rec := e.Watch(sentinel.WatchRequest{Subject: "github:acme/nohook#1", SessionID: "nohook", Types: []string{"*"}, Provider: "fake"})
		require.NoError(t, e.Reg.Report(ctx, "nohook", sentinel.SessionReport{Kind: sentinel.FollowCrashed}))
		fireOn(t, e, rec, "evt_1")
		require.Equal(t, sentinel.StatusOrphaned, e.Get(rec.ID).Status)
		require.Contains(t, parkedReasons(t, e, rec.ID)[0], "has no resume hook")
	})
	t.Run("a session that no longer exists parks", func(t *testing.T) {
		e.register(t, sentinel.RegisterSession{ID: "gone1"})
		rec := e.Watch(sentinel.WatchRequest{Subject: "github:acme/gone#1", SessionID: "gone1", Types: []string{"*"}, Provider: "fake"})
		_, err := e.Reg.End(ctx, "gone1", sessions.ReasonForgotten)
		require.NoError(t, err)
		fireOn(t, e, rec, "evt_1")
		require.Equal(t, sentinel.StatusOrphaned, e.Get(rec.ID).Status)
		require.Contains(t, parkedReasons(t, e, rec.ID)[0], "no longer exists")
	})
	t.Run("alive but rejecting parks instead of spinning", func(t *testing.T) {
		e.register(t, sentinel.RegisterSession{ID: "rejecting"})
		rec := e.Watch(sentinel.WatchRequest{Subject: "github:acme/rej#1", SessionID: "rejecting", Types: []string{"*"}, Provider: "fake"})
		e.reject.Store(true)
		fireOn(t, e, rec, "evt_1")
		e.reject.Store(false)
		got := e.Get(rec.ID)
		require.Equal(t, sentinel.StatusOrphaned, got.Status)
		require.Equal(t, 1, got.EventCount, "parking counts as handled")
		require.Contains(t, parkedReasons(t, e, rec.ID)[0], "reported alive but rejected")
	})
	t.Run("heartbeat lapse counts as a crash", func(t *testing.T) {
		e.register(t, sentinel.RegisterSession{ID: "hb", HeartbeatTTLMs: ptr(int64(60000))})
		rec := e.Watch(sentinel.WatchRequest{Subject: "github:acme/hb#1", SessionID: "hb", Types: []string{"*"}, Provider: "fake"})
		e.Clock.Advance(61 * 1000 * 1000 * 1000)
		fireOn(t, e, rec, "evt_1")
		require.Equal(t, sentinel.StatusOrphaned, e.Get(rec.ID).Status)
		require.Contains(t, parkedReasons(t, e, rec.ID)[0], "ended (crashed)")
	})
}

// The direct path (the inbox and record writes beside each other) is
// planned only for a target delivered to as it is: an alive or
// unregistered session. A session whose delivery needs a decision (resume,
// successor, forward, park) takes the routed path, whose record write
// follows the stored outcome and leaves no unconfirmed mark.
func TestRouterPlansOnlyLiveTargets(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	rec := fire(t, e, "never-registered-2")
	require.Equal(t, "evt_1_"+rec.ID, rec.Unconfirmed, "unregistered: direct")

	e.register(t, sentinel.RegisterSession{ID: "alive-2"})
	rec = fire(t, e, "alive-2")
	require.Equal(t, "evt_1_"+rec.ID, rec.Unconfirmed, "alive: direct")

	e.register(t, sentinel.RegisterSession{ID: "ended-2"})
	watched := e.Watch(sentinel.WatchRequest{Subject: "github:acme/plan#1", SessionID: "ended-2", Types: []string{"*"}, Provider: "fake"})
	_, err := e.Reg.End(ctx, "ended-2", sessions.ReasonOperatorStopped)
	require.NoError(t, err)
	fireOn(t, e, watched, "evt_1")
	got := e.Get(watched.ID)
	require.Empty(t, got.Unconfirmed, "ended: routed (parked)")
	require.Equal(t, sentinel.StatusOrphaned, got.Status)
	require.Len(t, parkedReasons(t, e, watched.ID), 1)
}
