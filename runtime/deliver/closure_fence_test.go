package deliver_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/runtime/deliver"
	"github.com/agentproto/sentinel/runtime/runtimetest"
)

// Scripts of issue 21, item 2: node A reads the record and pauses holding
// an event (deliver.PointRead); node B (its successor: the event's
// redelivery after A's ack wait ran out) handles it and what follows; A
// resumes. A's stale decision must not land on the record B wrote.

// twoNodes wires node A and node B on one JetStream, workers stopped: the
// scripts call each node's pipeline.
func twoNodes(t *testing.T) (a, b *runtimetest.Env) {
	a = runtimetest.Start(t, runtimetest.Options{NoWorkers: true, LeaderReads: true, Node: "a"})
	b = runtimetest.Join(t, a, runtimetest.Options{NoWorkers: true, Node: "b"})
	return a, b
}

// watchTypes watches pr for the given types only, until never.
func watchTypes(e *runtimetest.Env, session string, muteSelf bool, types ...string) *sentinel.Sentinel {
	return e.Watch(sentinel.WatchRequest{SessionID: session, Subject: pr, Types: types, Provider: "fake",
		Until: &sentinel.UntilArg{Until: sentinel.Until{Kind: sentinel.UntilNever}}, MuteSelf: &muteSelf})
}

// staleA runs A's Handle of ev in the background, held at PointRead, and
// returns once A holds it; wait releases A and returns its result.
func staleA(t *testing.T, a *runtimetest.Env, id string, ev sentinel.Event) (wait func() (deliver.Result, error)) {
	t.Helper()
	h := a.Pause.Hold(deliver.PointRead, ev.ID)
	type result struct {
		res deliver.Result
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := a.Pipeline.Handle(context.Background(), id, &ev)
		done <- result{res, err}
	}()
	runtimetest.Reach(t, h, "A reads the record holding "+ev.ID)
	return func() (deliver.Result, error) {
		h.Release()
		r := <-done
		return r.res, r.err
	}
}

func handleOn(t *testing.T, e *runtimetest.Env, id string, ev sentinel.Event, want deliver.Result) {
	t.Helper()
	res, err := e.Pipeline.Handle(context.Background(), id, &ev)
	require.NoError(t, err, ev.ID)
	require.Equal(t, want, res, ev.ID)
}

// Filtered: A holds E1 (the PR closed, outside the sentinel's types); B
// handles E1 (closes the subject) and E2 (reopened: reopens it); A wakes.
// Before the fix A's failed compare-and-set re-read the record and applied
// its stale close again, so E3 (a comment) was parked as post-mortem noise.
func TestStaleFilteredHandlerDoesNotReCloseAReopenedSubject(t *testing.T) {
	t.Run("one server", func(t *testing.T) { staleFilteredClose(t, twoNodes) })
	t.Run("three-node cluster", func(t *testing.T) {
		staleFilteredClose(t, func(t *testing.T) (a, b *runtimetest.Env) {
			envs := runtimetest.StartCluster(t, 3, runtimetest.Options{NoWorkers: true})
			return envs[0], envs[1]
		})
	})
}

func staleFilteredClose(t *testing.T, nodes func(t *testing.T) (a, b *runtimetest.Env)) {
	a, b := nodes(t)
	rec := watchTypes(a, "s1", false, "github.issue_comment.created")
	e1 := runtimetest.Event("evt_closed", "github.pull_request.closed", pr, true)
	e2 := runtimetest.Event("evt_reopened", "github.pull_request.reopened", pr, false)
	e3 := runtimetest.Event("evt_comment", "github.issue_comment.created", pr, false)

	wait := staleA(t, a, rec.ID, e1)
	handleOn(t, b, rec.ID, e1, deliver.ResultFiltered)
	require.True(t, b.Fresh(rec.ID).IsClosed(pr))
	handleOn(t, b, rec.ID, e2, deliver.ResultFiltered)
	require.False(t, b.Fresh(rec.ID).IsClosed(pr))

	res, err := wait()
	require.NoError(t, err)
	require.Equal(t, deliver.ResultDuplicate, res, "B handled E1 meanwhile")
	require.False(t, b.Fresh(rec.ID).IsClosed(pr), "A's stale close must not land on the reopened subject")

	handleOn(t, b, rec.ID, e3, deliver.ResultDelivered)
	require.Len(t, b.WaitInbox("s1", 1), 1)
}

// Muted: the same with the loop shield. A holds E2 (a self-caused
// reopened: muted, reopens); B handles E2, then E3 (closed: closes); A
// wakes and must not reopen the subject B closed, so E4 (a comment) is
// post-mortem noise.
func TestStaleMutedHandlerDoesNotReopenAClosedSubject(t *testing.T) {
	a, b := twoNodes(t)
	rec := watchTypes(a, "s1", true, "*")
	e1 := runtimetest.Event("evt_closed1", "github.pull_request.closed", pr, true)
	e2 := runtimetest.Event("evt_reopened", "github.pull_request.reopened", pr, false)
	e2.SelfCaused = true
	e3 := runtimetest.Event("evt_closed2", "github.pull_request.closed", pr, true)
	e4 := runtimetest.Event("evt_comment", "github.issue_comment.created", pr, false)
	handleOn(t, b, rec.ID, e1, deliver.ResultDelivered)

	wait := staleA(t, a, rec.ID, e2)
	handleOn(t, b, rec.ID, e2, deliver.ResultMuted)
	require.False(t, b.Fresh(rec.ID).IsClosed(pr))
	handleOn(t, b, rec.ID, e3, deliver.ResultDelivered)

	res, err := wait()
	require.NoError(t, err)
	require.Equal(t, deliver.ResultDuplicate, res)
	require.True(t, b.Fresh(rec.ID).IsClosed(pr), "A's stale reopen must not land on the closed subject")
	handleOn(t, b, rec.ID, e4, deliver.ResultParked)
	require.Len(t, b.WaitInbox("s1", 2), 2, "E1 and E3 only")
}

// Post-mortem: A holds E2 (a comment on the closed subject: post-mortem);
// B handles E2 (parks it) and E3 (reopened); A wakes and must not count or
// change anything; E4 is delivered on the reopened subject.
func TestStalePostMortemHandlerChangesNothing(t *testing.T) {
	a, b := twoNodes(t)
	rec := watchTypes(a, "s1", false, "*")
	e1 := runtimetest.Event("evt_closed", "github.pull_request.closed", pr, true)
	e2 := runtimetest.Event("evt_late", "github.issue_comment.created", pr, false)
	e3 := runtimetest.Event("evt_reopened", "github.pull_request.reopened", pr, false)
	e4 := runtimetest.Event("evt_comment", "github.issue_comment.created", pr, false)
	handleOn(t, b, rec.ID, e1, deliver.ResultDelivered)

	wait := staleA(t, a, rec.ID, e2)
	handleOn(t, b, rec.ID, e2, deliver.ResultParked)
	handleOn(t, b, rec.ID, e3, deliver.ResultDelivered)
	before := b.Fresh(rec.ID)

	res, err := wait()
	require.NoError(t, err)
	require.Equal(t, deliver.ResultDuplicate, res)
	after := b.Fresh(rec.ID)
	require.False(t, after.IsClosed(pr))
	require.Equal(t, before.EventCount, after.EventCount)
	require.Equal(t, before.SeenMarks, after.SeenMarks)
	handleOn(t, b, rec.ID, e4, deliver.ResultDelivered)
	require.Len(t, b.WaitInbox("s1", 3), 3, "E1, E3 and E4")
}

// Duplicate: A holds an event the record already holds; B handles the
// next events meanwhile; A wakes and writes nothing.
func TestStaleDuplicateHandlerWritesNothing(t *testing.T) {
	a, b := twoNodes(t)
	rec := watchTypes(a, "s1", false, "*")
	e1 := runtimetest.Event("evt_1", "github.issue_comment.created", pr, false)
	e2 := runtimetest.Event("evt_closed", "github.pull_request.closed", pr, true)
	handleOn(t, b, rec.ID, e1, deliver.ResultDelivered)

	wait := staleA(t, a, rec.ID, e1)
	handleOn(t, b, rec.ID, e2, deliver.ResultDelivered)
	before := b.Fresh(rec.ID)
	res, err := wait()
	require.NoError(t, err)
	require.Equal(t, deliver.ResultDuplicate, res)
	require.Equal(t, before, b.Fresh(rec.ID))
	require.Len(t, b.WaitInbox("s1", 2), 2)
}

// A conflict that is not the event's own redelivery (another write to the
// record: a poll cursor, an edit) decides again on the fresh record: the
// close still lands, once.
func TestFilteredCloseLandsAfterAnUnrelatedConflict(t *testing.T) {
	a, b := twoNodes(t)
	rec := watchTypes(a, "s1", false, "github.issue_comment.created")
	e1 := runtimetest.Event("evt_closed", "github.pull_request.closed", pr, true)

	wait := staleA(t, a, rec.ID, e1)
	_, err := b.Store.Update(context.Background(), rec.ID, func(r *sentinel.Sentinel) error {
		r.LastError = "poll: something"
		return nil
	})
	require.NoError(t, err)
	res, err := wait()
	require.NoError(t, err)
	require.Equal(t, deliver.ResultFiltered, res)
	got := b.Fresh(rec.ID)
	require.True(t, got.IsClosed(pr))
	require.True(t, got.HasSeen(e1.ID))
	require.Equal(t, "poll: something", got.LastError, "the other write stands")
}
