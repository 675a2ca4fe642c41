package deliver_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/runtime/deliver"
	"github.com/agentproto/sentinel/runtime/inbox"
	"github.com/agentproto/sentinel/runtime/journal"
	"github.com/agentproto/sentinel/runtime/runtimetest"
)

// handle runs the pipeline on one event, as a partition worker would.
func handle(t *testing.T, e *runtimetest.Env, sentinelID string, ev sentinel.Event) deliver.Result {
	t.Helper()
	res, err := e.Pipeline.Handle(context.Background(), sentinelID, &ev)
	require.NoError(t, err)
	return res
}

func decisionsOf(entries []sentinel.Decision) []string {
	out := make([]string, 0, len(entries))
	for _, d := range entries {
		out = append(out, d.Decision)
	}
	return out
}

// TestJournalRecordsEachPipelineBranch: delivered (message id and
// session), filtered (which clause, subject or type), duplicate (seen),
// post-mortem, stopped and expired each leave their entry with the
// event's identity.
func TestJournalRecordsEachPipelineBranch(t *testing.T) {
	e := runtimetest.Start(t, runtimetest.Options{NoWorkers: true})
	other := "github:acme/other#1"
	rec := e.Watch(sentinel.WatchRequest{SessionID: "s1", Provider: "fake", Match: []sentinel.Clause{
		{Subject: pr, Types: []string{"github.check_suite.*", "github.pull_request.*"}},
		{Subject: other, Types: []string{"*"}},
	}})
	handle(t, e, rec.ID, runtimetest.Event("evt_ok", "github.check_suite.completed", pr, false))
	handle(t, e, rec.ID, runtimetest.Event("evt_filtered", "github.issue_comment.created", pr, false))
	handle(t, e, rec.ID, runtimetest.Event("evt_ok", "github.check_suite.completed", pr, false))
	handle(t, e, rec.ID, runtimetest.Event("evt_closed", "github.pull_request.closed", pr, true))
	handle(t, e, rec.ID, runtimetest.Event("evt_late", "github.check_suite.completed", pr, false))

	got := e.Decisions(rec.ID, 5)
	require.Equal(t, []string{journal.Delivered, journal.Filtered, journal.Duplicate, journal.Delivered, journal.PostMortem}, decisionsOf(got))

	d := got[0]
	require.Equal(t, "evt_ok", d.EventID)
	require.Equal(t, rec.ID, d.SentinelID)
	require.Equal(t, pr, d.Subject)
	require.Equal(t, "github.check_suite.completed", d.Type)
	require.Equal(t, "github.check_suite.completed on "+pr, d.Summary)
	require.Equal(t, "fake", d.Provider)
	require.Equal(t, "s1", d.Session)
	require.Equal(t, inbox.EventMessageID(rec.Spec.Target.SessionID, "evt_ok", ""), d.MessageID)
	require.NotEmpty(t, d.Ts)
	require.NotEmpty(t, d.Time)
	require.Equal(t, "test", d.Node)

	f := got[1]
	require.Equal(t, []sentinel.ClauseMiss{
		{Clause: 0, Subject: pr, Failed: sentinel.MissType, Types: []string{"github.check_suite.*", "github.pull_request.*"}},
		{Clause: 1, Subject: other, Failed: sentinel.MissSubject},
	}, f.Clauses)
	require.Contains(t, f.Reason, "clause 0 ("+pr+"): type github.issue_comment.created not in")
	require.Contains(t, f.Reason, "clause 1 ("+other+"): subject does not match")

	require.Contains(t, got[2].Reason, "seen window")
	require.Contains(t, got[4].Reason, "already closed")
	require.Less(t, got[0].Seq, got[4].Seq)

	// Stopped: a removed sentinel; expired: until.at passed.
	require.NoError(t, e.Service.Remove(context.Background(), rec.ID))
	handle(t, e, rec.ID, runtimetest.Event("evt_gone", "github.check_suite.completed", pr, false))
	got = e.Decisions(rec.ID, 6)
	require.Equal(t, journal.Stopped, got[5].Decision)
	require.Equal(t, "evt_gone", got[5].EventID)

	at := e.Clock.Now().Add(time.Minute).UnixMilli()
	exp := e.Watch(sentinel.WatchRequest{SessionID: "s1", Provider: "fake", Subject: pr, Types: []string{"*"},
		Until: &sentinel.UntilArg{Until: sentinel.Until{Kind: sentinel.UntilAt, Ms: at}}})
	e.Clock.Advance(2 * time.Minute)
	handle(t, e, exp.ID, runtimetest.Event("evt_exp", "github.check_suite.completed", pr, false))
	require.Equal(t, journal.Expired, e.Decisions(exp.ID, 1)[0].Decision)
}

// outcomeRouter returns a fixed outcome, for the dead-target branches.
type outcomeRouter struct {
	out func(rec *sentinel.Sentinel, ev *sentinel.Event) (deliver.Outcome, error)
}

func (r outcomeRouter) Route(_ context.Context, rec *sentinel.Sentinel, ev *sentinel.Event) (deliver.Outcome, error) {
	return r.out(rec, ev)
}

// TestJournalRecordsDeadTargets: a parked event and one forwarded to the
// parent session are both dead-target, with the reason and where the
// forward went.
func TestJournalRecordsDeadTargets(t *testing.T) {
	var mode atomic.Int32
	router := outcomeRouter{out: func(rec *sentinel.Sentinel, ev *sentinel.Event) (deliver.Outcome, error) {
		if mode.Load() == 0 {
			return deliver.Outcome{Parked: true, Orphaned: true, Reason: "target session s1 no longer exists"}, nil
		}
		return deliver.Outcome{Message: &sentinel.Message{ID: "msg_fwd", To: "parent"}}, nil
	}}
	e := runtimetest.Start(t, runtimetest.Options{NoWorkers: true, Router: router})
	rec := watchPR(e, "s1", nil, pr)
	handle(t, e, rec.ID, runtimetest.Event("evt_1", "a.b.c", pr, false))
	mode.Store(1)
	handle(t, e, rec.ID, runtimetest.Event("evt_2", "a.b.c", pr, false))
	got := e.Decisions(rec.ID, 2)
	require.Equal(t, []string{journal.DeadTarget, journal.DeadTarget}, decisionsOf(got))
	require.Equal(t, "parked: target session s1 no longer exists", got[0].Reason)
	require.Contains(t, got[1].Reason, "forwarded to its parent parent")
	require.Equal(t, "parent", got[1].Session)
	require.Equal(t, "msg_fwd", got[1].MessageID)
}

// TestJournalRecordsRetriesAndUndeliverable: a failing delivery journals
// retrying with the error and attempt; a permanent failure undeliverable.
func TestJournalRecordsRetriesAndUndeliverable(t *testing.T) {
	fr := &flakyRouter{}
	fr.fails.Store(2)
	var permanent atomic.Bool
	router := outcomeRouter{out: func(rec *sentinel.Sentinel, ev *sentinel.Event) (deliver.Outcome, error) {
		if permanent.Load() {
			return deliver.Outcome{}, fmt.Errorf("bad message: %w", deliver.ErrPermanent)
		}
		return fr.Route(context.Background(), rec, ev)
	}}
	e := runtimetest.Start(t, runtimetest.Options{Router: router, NoWorkers: true})
	fr.inner = deliver.NewDirectRouter(e.Inbox, deliver.WithDirectRouterClock(func() time.Time { return time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC) }))
	require.NoError(t, e.Workers.Start(context.Background()))
	t.Cleanup(e.Workers.Stop)
	rec := watchPR(e, "s1", nil, pr)
	e.Fake.Emit(runtimetest.Event("evt_1", "a.b.c", pr, false))
	e.Loop.PollNow(context.Background())
	e.WaitInbox("s1", 1)
	got := e.Decisions(rec.ID, 3)
	require.Equal(t, []string{journal.Retrying, journal.Retrying, journal.Delivered}, decisionsOf(got))
	require.Contains(t, got[0].Reason, "inbox unavailable")
	require.Equal(t, 1, got[0].Attempt)
	require.Equal(t, 2, got[1].Attempt)

	permanent.Store(true)
	e.Fake.Emit(runtimetest.Event("evt_2", "a.b.c", pr, false))
	e.Loop.PollNow(context.Background())
	got = e.Decisions(rec.ID, 4)
	require.Equal(t, journal.Undeliverable, got[3].Decision)
	require.Contains(t, got[3].Reason, "bad message")
}

// TestLoopShieldMutesSelfCausedEventsButNeverTerminalOnes: with muteSelf
// a self-caused event is journaled as self and not delivered (and marked
// seen); a self-caused terminal event (the session's own merge) still
// delivers; without muteSelf self-caused events deliver.
func TestLoopShieldMutesSelfCausedEventsButNeverTerminalOnes(t *testing.T) {
	e := runtimetest.Start(t, runtimetest.Options{NoWorkers: true})
	yes, no := true, false
	muted := e.Watch(sentinel.WatchRequest{SessionID: "s1", Provider: "fake", Subject: pr, Types: []string{"*"}, MuteSelf: &yes})
	open := e.Watch(sentinel.WatchRequest{SessionID: "s2", Provider: "fake", Subject: pr, Types: []string{"*"}, MuteSelf: &no})
	require.True(t, muted.View().MuteSelf)
	require.False(t, open.View().MuteSelf)
	self := func(id, typ string, terminal bool) sentinel.Event {
		ev := runtimetest.Event(id, typ, pr, terminal)
		ev.SelfCaused = true
		return ev
	}
	require.Equal(t, deliver.ResultMuted, handle(t, e, muted.ID, self("evt_push", "github.pull_request.synchronize", false)))
	require.Equal(t, deliver.ResultDuplicate, handle(t, e, muted.ID, self("evt_push", "github.pull_request.synchronize", false)), "a muted event is marked seen")
	require.Equal(t, deliver.ResultDelivered, handle(t, e, muted.ID, runtimetest.Event("evt_review", "github.pull_request_review.submitted", pr, false)))
	require.Equal(t, deliver.ResultDelivered, handle(t, e, muted.ID, self("evt_merge", "github.pull_request.closed", true)))
	require.Equal(t, deliver.ResultDelivered, handle(t, e, open.ID, self("evt_push", "github.pull_request.synchronize", false)))

	got := e.Decisions(muted.ID, 4)
	require.Equal(t, []string{journal.Self, journal.Duplicate, journal.Delivered, journal.Delivered}, decisionsOf(got))
	require.True(t, got[0].SelfCaused)
	require.Contains(t, got[0].Reason, "muteSelf")
	require.Len(t, e.InboxOf("s1"), 2, "the review and the merge")
	require.Len(t, e.InboxOf("s2"), 1)
	require.Equal(t, 2, e.Get(muted.ID).EventCount)
}

// TestReplayOfAnEventThatCanNeverBeDelivered: a permanent failure is named
// not_replayable, not an internal error.
func TestReplayOfAnEventThatCanNeverBeDelivered(t *testing.T) {
	router := outcomeRouter{out: func(*sentinel.Sentinel, *sentinel.Event) (deliver.Outcome, error) {
		return deliver.Outcome{}, fmt.Errorf("too big: %w", deliver.ErrPermanent)
	}}
	e := runtimetest.Start(t, runtimetest.Options{NoWorkers: true, Router: router})
	rec := watchPR(e, "s1", nil, pr)
	ev := runtimetest.Event("evt_big", "a.b.c", pr, false)
	_, err := e.Pipeline.Replay(context.Background(), rec.ID, &ev, "prk_1", false)
	var de *sentinel.Error
	require.ErrorAs(t, err, &de)
	require.Equal(t, sentinel.CodeNotReplayable, de.Code)
	_, err = e.Pipeline.Replay(context.Background(), "sen_gone", &ev, "prk_1", false)
	require.ErrorAs(t, err, &de)
	require.Equal(t, sentinel.CodeSentinelNotFound, de.Code)
}
