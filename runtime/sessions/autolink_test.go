package sessions_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus/bustest"
	"github.com/agentproto/sentinel/providers/fake"
	"github.com/agentproto/sentinel/runtime/runtimetest"
	"github.com/agentproto/sentinel/runtime/sessions"
)

func TestAutoLinkGating(t *testing.T) {
	localGH := fake.New(fake.Config{Slug: "local-gh"})
	e := newEnv(t, localGH)
	ctx := context.Background()
	var enabled atomic.Bool
	enabled.Store(true)
	al := sessions.NewAutoLink(e.Service, sessions.WithAutoLinkEnabled(enabled.Load), sessions.WithAutoLinkLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	e.Reg.SetPRHook(al.PROpened)
	t.Cleanup(al.Stop)

	linked := func(session string) []*sentinel.Sentinel {
		all, err := e.Service.List(ctx)
		require.NoError(t, err)
		var out []*sentinel.Sentinel
		for _, r := range all {
			if r.Spec.Target.SessionID == session {
				out = append(out, r)
			}
		}
		return out
	}
	waitLinked := func(session string, n int) []*sentinel.Sentinel {
		var got []*sentinel.Sentinel
		bustest.Eventually(t, 10*time.Second, func() bool { got = linked(session); return len(got) == n }, "%s to have %d sentinels", session, n)
		return got
	}
	// settle waits until the auto-link goroutines are done.
	settle := func() {
		al.Stop()
		al = sessions.NewAutoLink(e.Service, sessions.WithAutoLinkEnabled(enabled.Load), sessions.WithAutoLinkLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
		e.Reg.SetPRHook(al.PROpened)
	}

	e.register(t, sentinel.RegisterSession{ID: "a1"})
	require.NoError(t, e.Reg.RecordPR(ctx, "a1", "https://github.com/acme/widgets/pull/5", sessions.PROpen, "five"))
	recs := waitLinked("a1", 1)
	r := recs[0]
	require.Equal(t, "auto:pr#5", r.Spec.Label)
	require.Equal(t, "a1", r.Spec.Group)
	require.Equal(t, sentinel.UrgencyNextTurn, r.Spec.Target.Urgency)
	require.Equal(t, sentinel.UntilSubjectTerminal, r.Spec.Until.Kind)
	require.Equal(t, sentinel.DefaultPRTypes(), r.Spec.Match[0].Types)
	require.Equal(t, "github:acme/widgets#5", r.Spec.Match[0].Subject)
	require.True(t, r.Spec.MuteSelf, "PR auto-link sentinels mute the session's own doing (the loop shield)")

	// Already watched for (subject, session): no second sentinel, even when
	// the PR is recorded again by another path.
	_, err := e.Service.Create(ctx, sentinel.WatchRequest{PRURL: "https://github.com/acme/widgets/pull/6", SessionID: "a1", Provider: "fake"}, "")
	require.NoError(t, err)
	require.NoError(t, e.Reg.RecordPR(ctx, "a1", "https://github.com/acme/widgets/pull/6", sessions.PROpen, ""))
	settle()
	require.Len(t, linked("a1"), 2)

	// Per-session opt-out wins over the config.
	e.register(t, sentinel.RegisterSession{ID: "a2", Sentinel: ptr(false)})
	require.NoError(t, e.Reg.RecordPR(ctx, "a2", "https://github.com/acme/widgets/pull/7", sessions.PROpen, ""))
	settle()
	require.Empty(t, linked("a2"))

	// The config is read fresh on every PR.
	enabled.Store(false)
	e.register(t, sentinel.RegisterSession{ID: "a3"})
	require.NoError(t, e.Reg.RecordPR(ctx, "a3", "https://github.com/acme/widgets/pull/8", sessions.PROpen, ""))
	settle()
	require.Empty(t, linked("a3"))
	enabled.Store(true)
	require.NoError(t, e.Reg.RecordPR(ctx, "a3", "https://github.com/acme/widgets/pull/9", sessions.PROpen, ""))
	waitLinked("a3", 1)

	// A failing preferred provider is retried once on local-gh.
	e.Fake.FailCreate(errors.New("backend down"))
	e.register(t, sentinel.RegisterSession{ID: "a4"})
	require.NoError(t, e.Reg.RecordPR(ctx, "a4", "https://github.com/acme/widgets/pull/10", sessions.PROpen, ""))
	recs = waitLinked("a4", 1)
	require.Equal(t, "local-gh", recs[0].Provider)

	// Both failing: swallowed, the PR is still recorded.
	localGH.FailCreate(errors.New("gh broken"))
	e.register(t, sentinel.RegisterSession{ID: "a5"})
	require.NoError(t, e.Reg.RecordPR(ctx, "a5", "https://github.com/acme/widgets/pull/11", sessions.PROpen, ""))
	settle()
	require.Empty(t, linked("a5"))
	s, err := e.Reg.Get(ctx, "a5")
	require.NoError(t, err)
	require.Len(t, s.PRs, 1)
	e.Fake.FailCreate(nil)
	localGH.FailCreate(nil)
}

func TestAutoLinkedMergeRaisesPRMerged(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.register(t, sentinel.RegisterSession{ID: "m1"})
	const url = "https://github.com/acme/gears/pull/3"
	require.NoError(t, e.Reg.RecordPR(ctx, "m1", url, sessions.PROpen, "gears"))
	rec := e.Watch(sentinel.WatchRequest{PRURL: url, SessionID: "m1", Provider: "fake", Label: "auto:pr#3", Group: "m1", Types: []string{"*"}})
	ev := sentinel.NewEvent("evt_merged", "//agentproto.local/sentinel/fake", "github.pull_request.closed", "github:acme/gears#3",
		[]string{"github:acme/gears#3"}, time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC), "merged", true, map[string]any{"merged": true})
	e.Fake.Emit(ev)
	e.Loop.PollNow(ctx)
	e.Drained()
	require.Len(t, e.InboxOf("m1"), 1)
	require.Equal(t, sentinel.StatusExpired, e.Get(rec.ID).Status)
	require.Equal(t, []string{"pr-opened", "pr-merged"}, kinds(e.lifecycle(t), "m1"))
	_ = runtimetest.Event
}
