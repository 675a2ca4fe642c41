package sessions_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/runtime/inbox"
	"github.com/agentproto/sentinel/runtime/sessions"
)

func TestRegistryLifecycle(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()

	s, created, err := e.Reg.Register(ctx, sentinel.RegisterSession{ID: "r1", Label: ptr("one"), Cwd: ptr("/w/p")})
	require.NoError(t, err)
	require.True(t, created)
	require.True(t, s.Sentinel, "auto-link is on by default")
	s, created, err = e.Reg.Register(ctx, sentinel.RegisterSession{ID: "r1", Sentinel: ptr(false)})
	require.NoError(t, err)
	require.False(t, created)
	require.Equal(t, "one", s.Label, "absent fields keep their value")
	require.False(t, s.Sentinel)

	_, _, err = e.Reg.Register(ctx, sentinel.RegisterSession{ID: "bad id"})
	require.ErrorIs(t, err, &sentinel.Error{Code: sentinel.CodeInvalidSessionID})

	require.NoError(t, e.Reg.Report(ctx, "r1", sentinel.SessionReport{Kind: sentinel.FollowTurnEnd, Excerpt: "done with it"}))
	s, err = e.Reg.Get(ctx, "r1")
	require.NoError(t, err)
	require.Equal(t, sentinel.SessionIdle, s.Status)
	require.Equal(t, "done with it", s.LastOutput)
	require.NoError(t, e.Reg.Report(ctx, "r1", sentinel.SessionReport{Kind: sentinel.FollowTurnEnd, AwaitingInput: true}))
	s, _ = e.Reg.Get(ctx, "r1")
	require.Equal(t, sentinel.SessionAwaitingInput, s.Status)
	require.Error(t, e.Reg.Report(ctx, "r1", sentinel.SessionReport{Kind: "nap"}))

	s, err = e.Reg.End(ctx, "r1", "")
	require.NoError(t, err)
	require.Equal(t, sentinel.SessionEnded, s.Status)
	require.Equal(t, sessions.ReasonOperatorStopped, s.EndedReason, "an operator end without a reason")
	require.True(t, s.Retired())
	_, err = e.Reg.End(ctx, "nobody", "")
	require.ErrorIs(t, err, &sentinel.Error{Code: sentinel.CodeSessionNotFound})

	// Implicit registration by a report; heartbeat lapse is a crash, swept once.
	require.NoError(t, e.Reg.Report(ctx, "r2", sentinel.SessionReport{Kind: sentinel.FollowAwaitingInput, Excerpt: "which one?"}))
	_, _, err = e.Reg.Register(ctx, sentinel.RegisterSession{ID: "r2", HeartbeatTTLMs: ptr(int64(30000))})
	require.NoError(t, err)
	e.Clock.Advance(29 * time.Second)
	s, _ = e.Reg.Get(ctx, "r2")
	require.Equal(t, sentinel.SessionRunning, s.Status)
	e.Clock.Advance(2 * time.Second)
	s, _ = e.Reg.Get(ctx, "r2")
	require.Equal(t, sentinel.SessionEnded, s.Status)
	require.Equal(t, sessions.ReasonCrashed, s.EndedReason)
	require.False(t, s.Retired(), "a crash is not deliberate")
	n, err := e.Reg.Sweep(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	n, err = e.Reg.Sweep(ctx)
	require.NoError(t, err)
	require.Zero(t, n)

	require.Equal(t, []string{"turn-end", "turn-end", "exited"}, kinds(e.lifecycle(t), "r1"))
	require.Equal(t, []string{"awaiting-input", "crashed"}, kinds(e.lifecycle(t), "r2"))

	// Forgotten rows are gone from the views.
	_, err = e.Reg.End(ctx, "r2", sessions.ReasonForgotten)
	require.NoError(t, err)
	_, err = e.Reg.Get(ctx, "r2")
	require.ErrorIs(t, err, &sentinel.Error{Code: sentinel.CodeSessionNotFound})
	all, err := e.Reg.List(ctx)
	require.NoError(t, err)
	require.Len(t, all, 1)
}

func TestRecordPREvents(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	const url = "https://github.com/acme/widgets/pull/12"
	require.NoError(t, e.Reg.RecordPR(ctx, "p1", url+"/files", sessions.PROpen, "Add widgets"))
	require.NoError(t, e.Reg.RecordPR(ctx, "p1", url, sessions.PROpen, ""))
	require.NoError(t, e.Reg.RecordPR(ctx, "p1", url, sessions.PRMerged, ""))
	require.NoError(t, e.Reg.RecordPR(ctx, "p1", url, sessions.PRMerged, ""))
	require.NoError(t, e.Reg.RecordPR(ctx, "p1", "https://github.com/acme/widgets/pull/13", sessions.PRClosed, ""))
	require.Error(t, e.Reg.RecordPR(ctx, "p1", "https://example.com/x", sessions.PROpen, ""))
	require.Error(t, e.Reg.RecordPR(ctx, "p1", url, "draft", ""))
	evs := e.lifecycle(t)
	require.Equal(t, []string{"pr-opened", "pr-merged"}, kinds(evs, "p1"))
	require.Equal(t, "Add widgets", evs[1].Detail)
	require.Equal(t, url, evs[1].Key)
	s, err := e.Reg.Get(ctx, "p1")
	require.NoError(t, err)
	require.Len(t, s.PRs, 2)
}

func TestSendComputesFrom(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.register(t, sentinel.RegisterSession{ID: "boss"})
	e.register(t, sentinel.RegisterSession{ID: "kid", ParentSessionID: ptr("boss"), Label: ptr("worker")})
	e.register(t, sentinel.RegisterSession{ID: "peer"})
	cases := []struct {
		name, to, caller, relation string
	}{
		{"human", "kid", "", inbox.RelationHuman},
		{"parent", "kid", "boss", inbox.RelationParent},
		{"child", "boss", "kid", inbox.RelationChild},
		{"sibling", "peer", "kid", inbox.RelationSibling},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := e.Inboxes.Send(ctx, tc.to, sentinel.SendMessage{Text: "hi"}, sessions.Sender{Session: tc.caller})
			require.NoError(t, err)
			require.Equal(t, tc.relation, m.From.Relation)
			require.Equal(t, tc.caller, m.From.SessionID)
			require.Equal(t, m.ID, m.CorrelationID)
		})
	}
	q, err := e.Inboxes.Send(ctx, "boss", sentinel.SendMessage{Text: "?", Kind: inbox.KindQuestion}, sessions.Sender{Session: "kid"})
	require.NoError(t, err)
	require.Equal(t, sentinel.UrgencySteer, q.Urgency, "questions steer by default")
	_, err = e.Inboxes.Send(ctx, "boss", sentinel.SendMessage{Text: "x", Data: []byte(`[1]`)}, sessions.Sender{})
	require.Error(t, err)

	// The read cursor: reads after it, advances only with ack.
	msgs, _, err := e.Inboxes.Read(ctx, sentinel.InboxQuery{SessionID: "boss"})
	require.NoError(t, err)
	require.Len(t, msgs, 2)
	msgs, _, err = e.Inboxes.Read(ctx, sentinel.InboxQuery{SessionID: "boss", Limit: 1, Ack: true})
	require.NoError(t, err)
	require.Len(t, msgs, 1)
	msgs, _, err = e.Inboxes.Read(ctx, sentinel.InboxQuery{SessionID: "boss", Ack: true})
	require.NoError(t, err)
	require.Len(t, msgs, 1)
	require.Equal(t, inbox.KindQuestion, msgs[0].Kind)
	msgs, _, err = e.Inboxes.Read(ctx, sentinel.InboxQuery{SessionID: "boss"})
	require.NoError(t, err)
	require.Empty(t, msgs)
	zero := uint64(0)
	msgs, _, err = e.Inboxes.Read(ctx, sentinel.InboxQuery{SessionID: "boss", After: &zero})
	require.NoError(t, err)
	require.Len(t, msgs, 2)
}
