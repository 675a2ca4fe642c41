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
	"github.com/agentproto/sentinel/runtime/journal"
	"github.com/agentproto/sentinel/runtime/runtimetest"
)

// threeWatches creates, on one session, a PR watch, a repository watch
// and a second identical PR watch (issue 29, part 1).
func threeWatches(e *runtimetest.Env, session string) []*sentinel.Sentinel {
	pr1 := e.Watch(sentinel.WatchRequest{SessionID: session, Subject: pr, Types: []string{"*"}, Provider: "fake"})
	repo := e.Watch(sentinel.WatchRequest{SessionID: session, Subject: "github:acme/widgets", Types: []string{"*"}, Provider: "fake"})
	pr2 := e.Watch(sentinel.WatchRequest{SessionID: session, Subject: pr, Types: []string{"*"}, Provider: "fake", AllowDuplicate: true})
	return []*sentinel.Sentinel{pr1, repo, pr2}
}

func msgEventID(t *testing.T, m sentinel.Message) string {
	t.Helper()
	var ev struct {
		ID string `json:"id"`
	}
	require.NoError(t, json.Unmarshal(m.Data, &ev))
	return ev.ID
}

// requireOncePerEvent checks that the session's inbox shows each of n
// events exactly once, and that every sentinel counted all n.
func requireOncePerEvent(t *testing.T, e *runtimetest.Env, session string, n int, recs []*sentinel.Sentinel) {
	t.Helper()
	for _, r := range recs {
		id := r.ID
		bustest.Eventually(t, 20*time.Second, func() bool { return e.Fresh(id).EventCount == n },
			"sentinel %s to count %d events", id, n)
	}
	msgs := e.WaitInbox(session, n)
	seen := map[string]int{}
	for _, m := range msgs {
		seen[msgEventID(t, m)]++
	}
	require.Len(t, seen, n, "each event shown")
	for id, c := range seen {
		require.Equal(t, 1, c, "event %s shown %d times", id, c)
	}
	require.Len(t, msgs, n)
}

func TestOneMessagePerSessionAndEvent(t *testing.T) {
	e := runtimetest.Start(t, runtimetest.Options{})
	recs := threeWatches(e, "s1")
	const n = 50
	for i := 0; i < n; i++ {
		e.Fake.Emit(runtimetest.Event(fmt.Sprintf("evt_%02d", i), "github.check_run.completed", pr, false))
	}
	e.Loop.PollNow(context.Background())
	requireOncePerEvent(t, e, "s1", n, recs)
	e.Drained()
	requireOncePerEvent(t, e, "s1", n, recs)

	// The journal says which sentinels merged: for each event one
	// delivered, two merged, in whichever order the partitions ran.
	delivered, merged := 0, 0
	for _, r := range recs {
		for _, d := range e.Decisions(r.ID, n) {
			switch d.Decision {
			case journal.Delivered:
				delivered++
			case journal.Merged:
				merged++
				require.NotEmpty(t, d.MessageID)
			}
		}
	}
	require.Equal(t, n, delivered)
	require.Equal(t, 2*n, merged)

	// A repoll (every sentinel's cursor again from zero is not possible;
	// the seen window holds them) shows nothing more.
	e.Loop.PollNow(context.Background())
	e.Drained()
	require.Len(t, e.InboxOf("s1"), n)
}

func TestOneMessagePerSessionAndEventOnThreeNodes(t *testing.T) {
	envs := runtimetest.StartCluster(t, 3, runtimetest.Options{})
	recs := threeWatches(envs[0], "s1")
	const n = 50
	for _, e := range envs {
		for i := 0; i < n; i++ {
			e.Fake.Emit(runtimetest.Event(fmt.Sprintf("evt_%02d", i), "github.check_run.completed", pr, false))
		}
	}
	// Every node polls every sentinel: the events stream drops the copies
	// (Nats-Msg-Id), the workers of three nodes race on the rest.
	for _, e := range envs {
		e.Loop.PollNow(context.Background())
	}
	requireOncePerEvent(t, envs[1], "s1", n, recs)
	for _, e := range envs {
		e.Drained()
	}
	requireOncePerEvent(t, envs[2], "s1", n, recs)
}

// A fyi repository watch that shows the event first must not swallow an
// interrupt PR watch's: the more urgent match wakes the session again,
// once; a less urgent one after that merges.
func TestMoreUrgentMatchWakesAgain(t *testing.T) {
	e := runtimetest.Start(t, runtimetest.Options{NoWorkers: true})
	repo := e.Watch(sentinel.WatchRequest{SessionID: "s1", Subject: "github:acme/widgets", Types: []string{"*"}, Provider: "fake", Urgency: sentinel.UrgencyFYI})
	hot := e.Watch(sentinel.WatchRequest{SessionID: "s1", Subject: pr, Types: []string{"*"}, Provider: "fake", Urgency: sentinel.UrgencyInterrupt})
	mid := e.Watch(sentinel.WatchRequest{SessionID: "s1", Subject: pr, Types: []string{"*"}, Provider: "fake", Urgency: sentinel.UrgencySteer})
	ev := runtimetest.Event("evt_hot", "github.check_run.completed", pr, false)

	handleOn(t, e, repo.ID, ev, "delivered")
	handleOn(t, e, hot.ID, ev, "delivered")
	handleOn(t, e, mid.ID, ev, "merged")
	// Redeliveries change nothing.
	handleOn(t, e, hot.ID, ev, "duplicate")
	handleOn(t, e, repo.ID, ev, "duplicate")

	msgs := e.InboxOf("s1")
	require.Len(t, msgs, 2)
	require.Equal(t, sentinel.UrgencyFYI, msgs[0].Urgency)
	require.Equal(t, repo.ID, msgs[0].Origin)
	require.Equal(t, sentinel.UrgencyInterrupt, msgs[1].Urgency)
	require.Equal(t, hot.ID, msgs[1].Origin)
	for _, r := range []*sentinel.Sentinel{repo, hot, mid} {
		require.Equal(t, 1, e.Fresh(r.ID).EventCount)
	}

	// The most urgent first: the others merge into it.
	ev2 := runtimetest.Event("evt_hot2", "github.check_run.completed", pr, false)
	handleOn(t, e, hot.ID, ev2, "delivered")
	handleOn(t, e, mid.ID, ev2, "merged")
	handleOn(t, e, repo.ID, ev2, "merged")
	require.Len(t, e.InboxOf("s1"), 3)
}
