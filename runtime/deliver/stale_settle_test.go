package deliver_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus/bustest"
	"github.com/agentproto/sentinel/runtime/deliver"
	"github.com/agentproto/sentinel/runtime/runtimetest"
)

// Scripts of issue 21, item 3. nats-server acks by stream sequence,
// whatever the delivery: a node that held a delivery past the ack wait
// (deliver.PointSettle: handled, pings stopped, not acked yet) while its
// redelivery is in flight on another node must not ack or nak it. A stale
// ack frees the partition's one slot, so a second event of the partition
// goes out while the first is still in flight; a stale nak sends the event
// out a third time.
func TestStaleSettleLeavesTheDeliveryToItsLiveHolder(t *testing.T) {
	t.Run("ack", func(t *testing.T) { staleSettle(t, false) })
	t.Run("nak", func(t *testing.T) { staleSettle(t, true) })
}

func staleSettle(t *testing.T, failFirst bool) {
	opts := runtimetest.Options{NoWorkers: true, LeaderReads: true, Partitions: 1, Node: "a", BusOpts: []bustest.Option{bustest.WithAckWait(time.Second)}}
	a := runtimetest.Start(t, opts)
	b := runtimetest.Join(t, a, runtimetest.Options{NoWorkers: true, Node: "b"})
	rec := watchPR(a, "s1", nil, pr)
	e1 := runtimetest.Event("evt_1", "x.y.z", pr, false)
	e2 := runtimetest.Event("evt_2", "x.y.z", pr, false)

	if failFirst {
		a.Pause.Fail(deliver.PointRead, e1.ID, 1, nil) // A's attempt fails: it will nak
	}
	aHeld := a.Pause.Hold(deliver.PointSettle, e1.ID)
	aGotE1 := a.Pause.Watch(deliver.PointReceived, e1.ID)
	aGotE2 := a.Pause.Watch(deliver.PointReceived, e2.ID)
	aLeft := a.Pause.Watch(deliver.PointAbandon, e1.ID)
	bHeld := b.Pause.Hold(deliver.PointSettle, e1.ID)
	bGotE2 := b.Pause.Watch(deliver.PointReceived, e2.ID)

	a.StartWorkers()
	_, err := a.Publisher.Publish(context.Background(), rec.ID, []sentinel.Event{e1, e2}, "push")
	require.NoError(t, err)
	runtimetest.Reach(t, aHeld, "A handled E1 and holds it unsettled")

	// B pulls too; A's ack wait runs out and B gets E1's redelivery.
	b.StartWorkers()
	runtimetest.Reach(t, bHeld, "B handles E1's redelivery")

	// A wakes while B holds E1.
	aHeld.Release()
	bustest.Eventually(t, 10*time.Second, func() bool {
		return aLeft.Count() > 0 || aGotE2.Count() > 0 || aGotE1.Count() > 1
	}, "A settles or leaves its stale delivery")
	require.Zero(t, aGotE2.Count()+bGotE2.Count(), "E2 went out while E1 was in flight on B: A's stale ack freed the partition")
	require.Equal(t, 1, aGotE1.Count(), "E1 went out a third time: A's stale nak")

	// B, the live holder, settles E1; E2 follows, once.
	bHeld.Release()
	msgs := a.WaitInbox("s1", 2)
	require.Len(t, msgs, 2)
	require.Contains(t, string(msgs[0].Data), `"id":"evt_1"`)
	require.Contains(t, string(msgs[1].Data), `"id":"evt_2"`)
	a.Drained()
	got := a.Fresh(rec.ID)
	require.Equal(t, 2, got.EventCount)
}

// A worker whose record write finds the event stored by another handler
// (fenced) gives its delivery up even while its ack wait has not run out:
// the other handler's delivery is the live one. Here the other handler is
// node B's pipeline run while A holds E1 at deliver.PointRead; A leaves
// E1 unacked, and its redelivery (a duplicate now) is acked, once.
func TestFencedWorkerLeavesTheDelivery(t *testing.T) {
	opts := runtimetest.Options{NoWorkers: true, LeaderReads: true, Partitions: 1, Node: "a", BusOpts: []bustest.Option{bustest.WithAckWait(time.Second)}}
	a := runtimetest.Start(t, opts)
	b := runtimetest.Join(t, a, runtimetest.Options{NoWorkers: true, Node: "b"})
	rec := watchPR(a, "s1", nil, pr)
	e1 := runtimetest.Event("evt_1", "x.y.z", pr, false)
	aRead := a.Pause.Hold(deliver.PointRead, e1.ID)
	aLeft := a.Pause.Watch(deliver.PointAbandon, e1.ID)
	aGot := a.Pause.Watch(deliver.PointReceived, e1.ID)

	a.StartWorkers()
	_, err := a.Publisher.Publish(context.Background(), rec.ID, []sentinel.Event{e1}, "push")
	require.NoError(t, err)
	runtimetest.Reach(t, aRead, "A reads E1's record")
	handleOn(t, b, rec.ID, e1, deliver.ResultDelivered)
	aRead.Release()
	runtimetest.Reach(t, aLeft, "A leaves its fenced delivery")
	a.Drained()
	require.Equal(t, 2, aGot.Count(), "E1 came back once and was acked as a duplicate")
	require.Len(t, a.InboxOf("s1"), 1)
	require.Equal(t, 1, a.Fresh(rec.ID).EventCount)
}
