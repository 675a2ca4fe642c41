package sessions_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus/bustest"
	"github.com/agentproto/sentinel/runtime/deliver"
	"github.com/agentproto/sentinel/runtime/runtimetest"
	"github.com/agentproto/sentinel/runtime/sessions"
)

// resumeServer is a harness's URL resume hook: each call spawns a new
// session and answers its id (prefix-r1, prefix-r2, ...).
func resumeServer(t *testing.T, prefix string) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, `{"sessionId":"%s-r%d"}`, prefix, n.Add(1))
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func endedWithURLHook(t *testing.T, e *env, id, url string) {
	t.Helper()
	e.register(t, sentinel.RegisterSession{ID: id, Hooks: &sentinel.SessionHooks{Resume: &sentinel.Hook{URL: url, TimeoutMs: 5000}}})
	_, err := e.Reg.End(context.Background(), id, sessions.ReasonCrashed)
	require.NoError(t, err)
}

// Issue 21, item 8: two nodes resume one session at once (a URL hook runs
// on whichever node has the event). Node A's hook answers first and A
// pauses before it links the successor (sessions.PointResumed); node B
// runs its own resume to the end; A resumes. The successor link is a
// compare-and-set: the session continues to B's successor only, and A
// delivers there too. Before the fix A overwrote the link, so the
// session's events went to two successors.
func TestTwoResumesAtOnceLinkOneSuccessor(t *testing.T) {
	a := newEnvWith(t, runtimetest.Options{NoWorkers: true, LeaderReads: true})
	b := joinEnv(t, a, runtimetest.Options{NoWorkers: true})
	hook, runs := resumeServer(t, "s1")
	endedWithURLHook(t, a, "s1", hook.URL)

	held := a.Pause.Hold(sessions.PointResumed, "s1")
	type result struct {
		res sessions.Resolution
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := a.Resolver.Resolve(context.Background(), "s1", true)
		done <- result{res, err}
	}()
	runtimetest.Reach(t, held, "A's resume hook answered")
	resB, err := b.Resolver.Resolve(context.Background(), "s1", true)
	require.NoError(t, err)
	require.Equal(t, sessions.Deliver, resB.Action)
	held.Release()
	resA := <-done
	require.NoError(t, resA.err)

	require.Equal(t, int64(2), runs.Load(), "both hooks ran (no cluster lock here)")
	require.Equal(t, resB, resA.res, "both deliver to the one successor")
	s, err := a.Reg.Lookup(context.Background(), "s1")
	require.NoError(t, err)
	require.Equal(t, resB.To, s.ContinuedTo, "the first link stands")
}

// With the cluster's resume lock (runtime/app sets WithResolverLocks on every
// node of a cluster), a second node's resume waits for the first: while A
// holds its resume, B's attempt within a deadline fails (its event is
// retried later) and runs no hook; after A, B delivers to A's successor.
func TestTheClusterResumeLockRunsOneHookAtATime(t *testing.T) {
	a := newEnvWith(t, runtimetest.Options{NoWorkers: true, LeaderReads: true}, clusterLocks("a"))
	b := joinEnv(t, a, runtimetest.Options{NoWorkers: true}, clusterLocks("b"))
	hook, runs := resumeServer(t, "s1")
	endedWithURLHook(t, a, "s1", hook.URL)

	held := a.Pause.Hold(sessions.PointResumed, "s1")
	done := make(chan sessions.Resolution, 1)
	go func() {
		res, err := a.Resolver.Resolve(context.Background(), "s1", true)
		require.NoError(t, err)
		done <- res
	}()
	runtimetest.Reach(t, held, "A's resume hook answered")
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	_, err := b.Resolver.Resolve(ctx, "s1", true)
	cancel()
	require.ErrorIs(t, err, context.DeadlineExceeded, "B waits for A's resume")
	held.Release()
	resA := <-done
	resB, err := b.Resolver.Resolve(context.Background(), "s1", true)
	require.NoError(t, err)
	require.Equal(t, resA, resB)
	require.Equal(t, int64(1), runs.Load(), "one hook ran")
}

// Issue 21, item 8: a stale direct-path handler. Node A plans the event for
// session s1 (alive) and pauses before its inbox write (deliver.PointSend)
// (and its in-progress pings, deliver.PointPing) past the ack wait; s1 dies; node B gets the redelivery, resumes s1 as
// s1-r1 and delivers there. A wakes after the inbox's duplicates window
// (1 s here) has passed: its write to s1 would be a second copy of the
// event in another inbox. A no longer holds the delivery, so it writes
// nothing and leaves it to B.
func TestAStaleDirectWriteDoesNotReachTheOldSession(t *testing.T) {
	const window = time.Second
	opts := runtimetest.Options{NoWorkers: true, LeaderReads: true, Partitions: 1, BusOpts: []bustest.Option{bustest.WithAckWait(time.Second), bustest.WithInboxDuplicates(window)}}
	a := newEnvWith(t, opts)
	b := joinEnv(t, a, runtimetest.Options{NoWorkers: true})
	hook, _ := resumeServer(t, "s1")
	a.register(t, sentinel.RegisterSession{ID: "s1", Hooks: &sentinel.SessionHooks{Resume: &sentinel.Hook{URL: hook.URL, TimeoutMs: 5000}}})
	rec := a.Watch(sentinel.WatchRequest{Subject: "github:acme/w#1", SessionID: "s1", Types: []string{"*"}, Provider: "fake"})
	ev := runtimetest.Event("evt_1", "x.y.z", "github:acme/w#1", false)

	aSend := a.Pause.Hold(deliver.PointSend, ev.ID)
	aPing := a.Pause.Hold(deliver.PointPing, ev.ID) // A's pings stop: it is paused
	aLeft := a.Pause.Watch(deliver.PointAbandon, ev.ID)
	a.StartWorkers()
	_, err := a.Publisher.Publish(context.Background(), rec.ID, []sentinel.Event{ev}, "push")
	require.NoError(t, err)
	runtimetest.Reach(t, aSend, "A planned the direct write to s1")
	_, err = a.Reg.End(context.Background(), "s1", sessions.ReasonCrashed)
	require.NoError(t, err)

	b.StartWorkers()
	got := b.WaitInbox("s1-r1", 1)
	require.Len(t, got, 1)
	// The one wait on time: the pause outlasts the inbox's duplicates
	// window, which runs on the server's clock.
	<-time.After(window + 200*time.Millisecond)
	aSend.Release()
	aPing.Release()
	runtimetest.Reach(t, aLeft, "A leaves the delivery to B")
	require.Empty(t, a.InboxOf("s1"), "the event reached one inbox")
	require.Len(t, a.InboxOf("s1-r1"), 1)
	require.Equal(t, "s1-r1", a.Fresh(rec.ID).Spec.Target.SessionID)
}

// Issue 21, item 2, the parked outcome: node A reads the record and pauses
// with an event for a session that ended without a resume hook
// (deliver.PointRead); node B parks it (dead target) and orphans the
// sentinel; A wakes: its record write finds the event stored and changes
// nothing (one count, one park record).
func TestAStaleDeadTargetParkChangesNothing(t *testing.T) {
	a := newEnvWith(t, runtimetest.Options{NoWorkers: true, LeaderReads: true})
	b := joinEnv(t, a, runtimetest.Options{NoWorkers: true})
	a.register(t, sentinel.RegisterSession{ID: "gone"})
	rec := a.Watch(sentinel.WatchRequest{Subject: "github:acme/dead#1", SessionID: "gone", Types: []string{"*"}, Provider: "fake"})
	_, err := a.Reg.End(context.Background(), "gone", sessions.ReasonCrashed)
	require.NoError(t, err)
	ev := runtimetest.Event("evt_1", "x.y.z", "github:acme/dead#1", false)

	held := a.Pause.Hold(deliver.PointRead, ev.ID)
	done := make(chan deliver.Result, 1)
	go func() {
		res, err := a.Pipeline.Handle(context.Background(), rec.ID, &ev)
		require.NoError(t, err)
		done <- res
	}()
	runtimetest.Reach(t, held, "A read the record")
	res, err := b.Pipeline.Handle(context.Background(), rec.ID, &ev)
	require.NoError(t, err)
	require.Equal(t, deliver.ResultParked, res)
	before := b.Fresh(rec.ID)
	held.Release()
	require.Equal(t, deliver.ResultDuplicate, <-done)
	after := b.Fresh(rec.ID)
	require.Equal(t, before.EventCount, after.EventCount)
	require.Equal(t, sentinel.StatusOrphaned, after.Status)
	require.Len(t, parkedReasons(t, b, rec.ID), 1)
}
