package deliver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus/bustest"
	"github.com/agentproto/sentinel/runtime/deliver"
	"github.com/agentproto/sentinel/runtime/runtimetest"
)

// ciBurst is a push's CI: 12 checks that pass and lint and e2e that fail
// on 3f2a1c4, then alice's review asking for changes.
func ciBurst() []sentinel.Event {
	at := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	var evs []sentinel.Event
	for i := 0; i < 14; i++ {
		name, concl := fmt.Sprintf("job-%02d", i), "success"
		switch i {
		case 3:
			name, concl = "lint", "failure"
		case 9:
			name, concl = "e2e", "failure"
		}
		evs = append(evs, sentinel.NewEvent(fmt.Sprintf("evt_ci_%02d", i), "//fake", "github.check_run.completed", pr, []string{pr}, at,
			"Check "+name+" "+concl, false, map[string]any{"name": name, "conclusion": concl, "head_sha": "3f2a1c4d5e6f"}))
	}
	evs = append(evs, sentinel.NewEvent("evt_review", "//fake", "github.pull_request_review.submitted", pr, []string{pr}, at,
		"PR review changes_requested by alice", false, map[string]any{"state": "CHANGES_REQUESTED", "actor": "alice"}))
	return evs
}

type digestData struct {
	Digest  bool   `json:"digest"`
	Subject string `json:"subject"`
	State   string `json:"state"`
	Count   int    `json:"count"`
	Events  []struct {
		ID      string           `json:"id"`
		Urgency sentinel.Urgency `json:"urgency"`
	} `json:"events"`
}

func digestOf(t *testing.T, m sentinel.Message) digestData {
	t.Helper()
	var d digestData
	require.NoError(t, json.Unmarshal(m.Data, &d))
	require.True(t, d.Digest, "a digest message: %s", m.Data)
	return d
}

func flushDue(t *testing.T, e *runtimetest.Env) int {
	t.Helper()
	n, err := e.Batches.FlushDue(context.Background())
	require.NoError(t, err)
	return n
}

const state = "CI on 3f2a1c4: 12 passed, 2 failed: lint, e2e; review: changes requested by alice"

func TestDigestOfABurst(t *testing.T) {
	e := runtimetest.Start(t, runtimetest.Options{})
	rec := e.Watch(sentinel.WatchRequest{SessionID: "s1", Subject: pr, Types: []string{"*"}, Provider: "fake", Urgency: sentinel.UrgencyFYI, BatchMs: 30000})
	require.Equal(t, 30000, rec.View().BatchMs)
	burst := ciBurst()
	for _, ev := range burst[:10] {
		e.Fake.Emit(ev)
	}
	e.Loop.PollNow(context.Background())
	bustest.Eventually(t, 10*time.Second, func() bool { return e.Fresh(rec.ID).EventCount == 10 }, "10 events counted")
	e.Drained()
	// A later event of the window at a higher urgency: the digest takes it.
	_, err := e.Store.Update(context.Background(), rec.ID, func(r *sentinel.Sentinel) error {
		r.Spec.Target.Urgency = sentinel.UrgencySteer
		return nil
	})
	require.NoError(t, err)
	for _, ev := range burst[10:] {
		e.Fake.Emit(ev)
	}
	e.Loop.PollNow(context.Background())
	bustest.Eventually(t, 10*time.Second, func() bool { return e.Fresh(rec.ID).EventCount == len(burst) }, "every event counted")
	e.Drained()
	require.Empty(t, e.InboxOf("s1"), "nothing shown inside the window")
	require.Zero(t, flushDue(t, e), "the window has not ended")

	e.Clock.Advance(30 * time.Second)
	require.Equal(t, 1, flushDue(t, e))
	msgs := e.InboxOf("s1")
	require.Len(t, msgs, 1, "one message for the burst")
	m := msgs[0]
	require.Equal(t, "[github] 15 events on "+pr+": "+state, m.Text)
	require.Equal(t, sentinel.UrgencySteer, m.Urgency, "the highest urgency among the events")
	require.Equal(t, rec.ID, m.Origin)
	d := digestOf(t, m)
	require.Equal(t, state, d.State)
	require.Equal(t, len(burst), d.Count)
	require.Len(t, d.Events, len(burst), "every event in the data")
	for i, ev := range burst {
		require.Equal(t, ev.ID, d.Events[i].ID)
	}
	require.Zero(t, flushDue(t, e), "nothing left to flush")
	require.Len(t, e.InboxOf("s1"), 1)

	// The next event opens a new window: its own digest.
	e.Fake.Emit(runtimetest.Event("evt_after", "github.issue_comment.created", pr, false))
	e.Loop.PollNow(context.Background())
	bustest.Eventually(t, 10*time.Second, func() bool { return e.Fresh(rec.ID).EventCount == len(burst)+1 }, "the next event counted")
	e.Drained()
	e.Clock.Advance(30 * time.Second)
	require.Equal(t, 1, flushDue(t, e))
	msgs = e.InboxOf("s1")
	require.Len(t, msgs, 2)
	require.Equal(t, 1, digestOf(t, msgs[1]).Count)
}

func TestDigestTerminalEventIsNotHeld(t *testing.T) {
	e := runtimetest.Start(t, runtimetest.Options{})
	rec := e.Watch(sentinel.WatchRequest{SessionID: "s1", Subject: pr, Types: []string{"*"}, Provider: "fake",
		Until: &sentinel.UntilArg{Until: sentinel.Until{Kind: sentinel.UntilSubjectTerminal}}, BatchMs: 600000})
	burst := ciBurst()
	for _, ev := range burst[:3] {
		e.Fake.Emit(ev)
	}
	e.Loop.PollNow(context.Background())
	bustest.Eventually(t, 10*time.Second, func() bool { return e.Fresh(rec.ID).EventCount == 3 }, "3 events counted")
	e.Drained()
	require.Empty(t, e.InboxOf("s1"))

	e.Fake.Emit(runtimetest.Event("evt_merged", "github.pull_request.closed", pr, true))
	e.Loop.PollNow(context.Background())
	// No clock move, no flusher: the terminal event flushes the window
	// and shows itself at once.
	msgs := e.WaitInbox("s1", 2)
	require.Len(t, msgs, 2)
	require.Equal(t, 3, digestOf(t, msgs[0]).Count, "the held events first, as one digest")
	require.Equal(t, "evt_merged", msgEventID(t, msgs[1]), "then the terminal event as it is")
	bustest.Eventually(t, 10*time.Second, func() bool { return e.Fresh(rec.ID).Status == sentinel.StatusExpired }, "until decided as before")
	require.Equal(t, 4, e.Fresh(rec.ID).EventCount)
	e.Drained()
	require.Zero(t, flushDue(t, e))
	require.Len(t, e.InboxOf("s1"), 2)
}

// TestDigestAcrossANodeLoss: a node holds a window's events (acked, in
// KV) and its delivery workers are lost; the second node takes the rest of the window and
// flushes it; the first node's flush, cut off after it sealed the window,
// comes back and adds nothing. Then a redelivery of an event already
// shown is not held again.
func TestDigestAcrossANodeLoss(t *testing.T) {
	a := runtimetest.Start(t, runtimetest.Options{LeaderReads: true})
	rec := a.Watch(sentinel.WatchRequest{SessionID: "s1", Subject: pr, Types: []string{"*"}, Provider: "fake", BatchMs: 30000})
	burst := ciBurst()
	for _, ev := range burst[:7] {
		a.Fake.Emit(ev)
	}
	a.Loop.PollNow(context.Background())
	bustest.Eventually(t, 10*time.Second, func() bool { return a.Fresh(rec.ID).EventCount == 7 }, "7 events counted on a")
	a.Drained()
	a.Workers.Stop() // node a is gone (its workers; its window is in KV)

	b := runtimetest.Join(t, a, runtimetest.Options{})
	for _, ev := range burst[7:] {
		a.Fake.Emit(ev) // polled by a's loop, delivered by b's workers
	}
	a.Loop.PollNow(context.Background())
	bustest.Eventually(t, 10*time.Second, func() bool { return b.Fresh(rec.ID).EventCount == len(burst) }, "every event counted")
	b.Drained()
	require.Empty(t, b.InboxOf("s1"))

	b.Clock.Advance(30 * time.Second)
	// a flushes first and is cut off once it sealed the window.
	key := deliver.BatchKey(rec.ID, pr)
	hold := a.Pause.Hold(deliver.PointDigestSealed, key)
	aDone := make(chan error, 1)
	go func() { _, err := a.Batches.FlushDue(context.Background()); aDone <- err }()
	runtimetest.Reach(t, hold, "a sealed the window")
	require.Equal(t, 1, flushDue(t, b), "b completes the sealed window")
	hold.Release()
	require.NoError(t, <-aDone)

	msgs := b.InboxOf("s1")
	require.Len(t, msgs, 1, "one digest, shown once")
	d := digestOf(t, msgs[0])
	require.Len(t, d.Events, len(burst), "nothing lost")
	require.Equal(t, state, d.State)

	// An event already shown, delivered again (its ack lost): not held again.
	out, err := b.Batches.Hold(context.Background(), b.Fresh(rec.ID), &burst[2])
	require.NoError(t, err)
	require.True(t, out.Duplicate)
	b.Clock.Advance(time.Minute)
	require.Zero(t, flushDue(t, b))
	require.Len(t, b.InboxOf("s1"), 1)
}

func TestWatchBatchMsValidated(t *testing.T) {
	for _, n := range []int{-1, sentinel.MaxBatchMs + 1} {
		req := sentinel.WatchRequest{SessionID: "s1", Subject: pr, BatchMs: n}
		_, err := req.Expand("")
		require.Error(t, err)
		require.ErrorIs(t, err, &sentinel.Error{Code: sentinel.CodeInvalidBatch})
		require.Contains(t, err.Error(), "batchMs must be within 0..600000")
	}
}

// TestDigestOnThreeNodes: a window held on a cluster, flushed by every
// node at once: one digest with every event.
func TestDigestOnThreeNodes(t *testing.T) {
	envs := runtimetest.StartCluster(t, 3, runtimetest.Options{})
	a := envs[0]
	rec := a.Watch(sentinel.WatchRequest{SessionID: "s1", Subject: pr, Types: []string{"*"}, Provider: "fake", BatchMs: 30000})
	burst := ciBurst()
	for _, ev := range burst {
		a.Fake.Emit(ev)
	}
	a.Loop.PollNow(context.Background())
	bustest.Eventually(t, 20*time.Second, func() bool { return a.Fresh(rec.ID).EventCount == len(burst) }, "every event counted")
	a.Clock.Advance(30 * time.Second)
	errs := make(chan error, len(envs))
	for _, e := range envs {
		go func() { _, err := e.Batches.FlushDue(context.Background()); errs <- err }()
	}
	for range envs {
		require.NoError(t, <-errs)
	}
	msgs := a.WaitInbox("s1", 1)
	require.Len(t, msgs, 1, "one digest on three nodes")
	require.Len(t, digestOf(t, msgs[0]).Events, len(burst))
	for _, e := range envs {
		require.Len(t, e.InboxOf("s1"), 1)
	}
}
