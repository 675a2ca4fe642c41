package deliver_test

import (
	"context"
	"testing"
	"time"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus"
	"github.com/agentproto/sentinel/runtime/runtimetest"
)

// TestPartitionNeverStalls publishes events one at a time and waits for
// each inbox message: a consumer loop that lost its pull request (the
// failure mode of a long-lived pull iterator with one message in flight)
// would leave an event undelivered for tens of seconds.
func TestPartitionNeverStalls(t *testing.T) {
	e := runtimetest.Start(t, runtimetest.Options{Partitions: 16, NoWorkers: true})
	if err := e.Workers.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Workers.Stop)
	rec := e.Watch(sentinel.WatchRequest{SessionID: "bench", Subject: pr, Types: []string{"*"}, Provider: "fake"})
	landed := make(chan struct{}, 1)
	unsub, _ := e.Inbox.Subscribe("bench", func() { landed <- struct{}{} })
	defer unsub()
	ctx := context.Background()
	for i := 0; i < 1000; i++ {
		start := time.Now()
		if _, err := e.Publisher.Publish(ctx, rec.ID, []sentinel.Event{benchEvent(i)}, "bench"); err != nil {
			t.Fatal(err)
		}
		select {
		case <-landed:
		case <-time.After(20 * time.Second):
			c, _ := e.Bus.Bus.PartitionConsumer(ctx, bus.Partition(rec.ID, 16))
			info, _ := c.Info(ctx)
			r := e.Get(rec.ID)
			t.Fatalf("event %d did not land; count %d last %s seen %v; consumer delivered %+v ackfloor %+v pending %d ackpending %d waiting %d redelivered %d", i, r.EventCount, r.LastHandledID, r.HasSeen(benchEvent(i).ID), info.Delivered, info.AckFloor, info.NumPending, info.NumAckPending, info.NumWaiting, info.NumRedelivered)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Logf("event %d took %v", i, d)
		}
	}
}
