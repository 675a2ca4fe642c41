package poll_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/runtime/poll"
	"github.com/agentproto/sentinel/runtime/runtimetest"
)

// A poll that found events re-reads the cursor through the records
// bucket's leader before it publishes them. When that leader was just
// killed and no successor is elected yet, the request is answered by no
// one, and, the API's subject still having subscribers on the live
// servers, not refused as "no responders" either. Read under the tick's
// context, which has no deadline, it waited for ever: the tick never
// ended, the node kept renewing its poll lease and never polled again
// (chaos seed 196 under load: every polled event from the kill on was
// lost). The read is bounded now; the poll's result is dropped, the next
// tick polls again.
func TestPollFenceReadNoOneAnswersDoesNotStallTheLoop(t *testing.T) {
	e := runtimetest.Start(t, runtimetest.Options{NoWorkers: true, LeaderReads: true, Poll: []poll.Option{poll.WithFenceTimeout(200 * time.Millisecond)}})
	var dead atomic.Bool
	sub := e.SilentLeader(t, dead.Load)

	rec := e.Watch(sentinel.WatchRequest{SessionID: "s1", Subject: pr, Types: []string{"*"}})
	polled := rec.Handle.Cursor
	e.Fake.Emit(runtimetest.Event("evt_1", "x.y.z", pr, false))

	dead.Store(true)
	done := make(chan struct{})
	go func() { defer close(done); e.Loop.PollNow(context.Background()) }()
	_, err := sub.NextMsg(10 * time.Second)
	require.NoError(t, err, "the fence reads the cursor through the (dead) leader")
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the tick waits for ever on a leader read no one answers")
	}
	dead.Store(false)
	require.Equal(t, polled, e.Get(rec.ID).Handle.Cursor, "a poll whose fence could not be read moves nothing")

	// The leader is back: the next tick polls and delivers.
	e.Loop.PollNow(context.Background())
	require.NotEqual(t, polled, e.Get(rec.ID).Handle.Cursor)
	e.StartWorkers()
	msgs := e.WaitInbox("s1", 1)
	require.Len(t, msgs, 1)
}
