package bus_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/bus"
	"github.com/agentproto/sentinel/bus/bustest"
)

// An asynchronous publisher returns before the ack; Complete closes once
// every ack came; a message id deduplicates as a synchronous publish's
// does; a publish no stream takes fails through OnError.
func TestAsyncPublisherPublishesWithAMessageID(t *testing.T) {
	env := bustest.Start(t)
	ctx := context.Background()
	s, err := env.JS.CreateStream(ctx, jetstream.StreamConfig{Name: "TEST_ASYNC", Subjects: []string{"test.async.>"}, Duplicates: time.Minute})
	require.NoError(t, err)
	var failed atomic.Int64
	p, err := env.Bus.NewAsyncPublisher(bus.AsyncConfig{MaxPending: 8, AckTimeout: 5 * time.Second, OnError: func(error) { failed.Add(1) }})
	require.NoError(t, err)

	require.NoError(t, p.Publish("test.async.a", []byte("1"), "id-1"))
	require.NoError(t, p.Publish("test.async.a", []byte("1 again"), "id-1"))
	require.NoError(t, p.Publish("test.async.b", []byte("2"), ""))
	require.NoError(t, p.Publish("test.unstored", []byte("3"), ""))
	select {
	case <-p.Complete():
	case <-time.After(10 * time.Second):
		t.Fatal("acks never completed")
	}
	require.Zero(t, p.Pending())
	info, err := s.Info(ctx)
	require.NoError(t, err)
	require.Equal(t, uint64(2), info.State.Msgs, "the second copy of id-1 is a duplicate")
	bustest.Eventually(t, 10*time.Second, func() bool { return failed.Load() == 1 }, "the publish no stream takes failed")
}
