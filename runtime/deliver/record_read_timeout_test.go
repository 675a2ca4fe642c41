package deliver_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/runtime/deliver"
	"github.com/agentproto/sentinel/runtime/runtimetest"
)

// A delivery reads its sentinel's record through the records bucket's
// leader. Sent while that leader is dead and no successor is elected, the
// request is answered by no one (the live servers hold the API's
// subscription but leave it to the leader they still believe in). Bound
// only by the handler's timeout (30 s), the worker kept the event in
// progress, pinging, and its partition delivered nothing for that long
// (chaos seed 196: delivery resumed 36.7 s after a kill). The read is
// bounded now: the run fails, and the event is retried after its backoff.
func TestRecordReadNoOneAnswersDoesNotStallThePartition(t *testing.T) {
	e := runtimetest.Start(t, runtimetest.Options{NoWorkers: true, LeaderReads: true, PipelineOpts: []deliver.PipelineOption{deliver.WithRecordReadTimeout(200 * time.Millisecond)}})
	var armed atomic.Bool
	sub := e.SilentLeader(t, func() bool { return armed.CompareAndSwap(true, false) })

	rec := e.Watch(sentinel.WatchRequest{SessionID: "s1", Subject: pr, Types: []string{"*"}, Provider: "fake"})
	armed.Store(true)
	e.StartWorkers()
	_, err := e.Publisher.Publish(context.Background(), rec.ID, []sentinel.Event{runtimetest.Event("evt_1", "x.y.z", pr, false)}, "push")
	require.NoError(t, err)
	_, err = sub.NextMsg(10 * time.Second)
	require.NoError(t, err, "the delivery reads the record through the (dead) leader")
	// Retried after its backoff (1 s), well within WaitInbox's 10 s; bound
	// by the handler's 30 s, it was not.
	msgs := e.WaitInbox("s1", 1)
	require.Len(t, msgs, 1)
}
