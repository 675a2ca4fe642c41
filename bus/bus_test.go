package bus_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/bus"
	"github.com/agentproto/sentinel/bus/bustest"
)

func TestOpenIsIdempotentAndDedups(t *testing.T) {
	env := bustest.Start(t)
	ctx := context.Background()
	// Re-provisioning the same store is a no-op.
	b2, err := bus.Open(ctx, env.NC, env.Bus.Cfg)
	require.NoError(t, err)
	require.NotNil(t, b2.EventsStream())

	dup, err := env.Bus.PublishEvent(ctx, "sen_A", "evt_1", []byte(`{}`))
	require.NoError(t, err)
	require.False(t, dup)
	dup, err = env.Bus.PublishEvent(ctx, "sen_A", "evt_1", []byte(`{}`))
	require.NoError(t, err)
	require.True(t, dup)
}

func TestPublishOnceRefusesSecondCopyForever(t *testing.T) {
	env := bustest.Start(t)
	ctx := context.Background()
	// A stream of one subject per message, as the inbox is.
	s := env.Stream(t, bus.StreamSpec{Config: jetstream.StreamConfig{Name: "TEST_ONCE", Subjects: []string{"test.once.*.*"}}})
	subject := func(box, id string) string { return "test.once." + box + "." + id }
	seq, dup, err := env.Bus.PublishOnce(ctx, s, subject("s1", "msg_abc"), []byte(`{"n":1}`), "msg_abc")
	require.NoError(t, err)
	require.False(t, dup)
	seq2, dup, err := env.Bus.PublishOnce(ctx, s, subject("s1", "msg_abc"), []byte(`{"n":2}`), "msg_abc")
	require.NoError(t, err)
	require.True(t, dup)
	require.Equal(t, seq, seq2)

	// Outside the Nats-Msg-Id window (simulated: a copy stored without a
	// message id) the per-subject expectation still refuses a second copy.
	ack, err := env.JS.Publish(ctx, subject("s1", "msg_old"), []byte(`{}`))
	require.NoError(t, err)
	seq2, dup, err = env.Bus.PublishOnce(ctx, s, subject("s1", "msg_old"), []byte(`{"n":3}`), "msg_old")
	require.NoError(t, err)
	require.True(t, dup)
	require.Equal(t, ack.Sequence, seq2)
	seq = ack.Sequence
	require.NoError(t, err)
	require.True(t, dup)
	require.Equal(t, seq, seq2)
}

func TestPartitionIsStable(t *testing.T) {
	p := bus.Partition("sen_01JAB2C3D4E5F6G7H8J9K0L1M2", 16)
	require.Equal(t, p, bus.Partition("sen_01JAB2C3D4E5F6G7H8J9K0L1M2", 16))
	require.Less(t, p, 16)
}

func TestChangingPartitionsRetiresEmptyConsumersAndRefusesWhileEventsWait(t *testing.T) {
	env := bustest.Start(t, bustest.WithPartitions(4))
	ctx := context.Background()
	cfg := env.Bus.Cfg
	cfg.Partitions = 2
	b2, err := bus.Open(ctx, env.NC, cfg)
	require.NoError(t, err)
	names := map[string]bool{}
	lister := b2.EventsStream().ConsumerNames(ctx)
	for n := range lister.Name() {
		names[n] = true
	}
	require.Equal(t, map[string]bool{"deliver-0": true, "deliver-1": true}, names)

	// An event waiting in partition 1, then the count changed: refused.
	id := ""
	for i := 0; id == ""; i++ {
		if cand := fmt.Sprintf("sen_%d", i); bus.Partition(cand, 2) == 1 {
			id = cand
		}
	}
	_, err = b2.PublishEvent(ctx, id, "evt_1", []byte(`{}`))
	require.NoError(t, err)
	cfg.Partitions = 1
	_, err = bus.Open(ctx, env.NC, cfg)
	require.ErrorContains(t, err, "undelivered events")
	cfg.Partitions = 3
	_, err = bus.Open(ctx, env.NC, cfg)
	require.ErrorContains(t, err, "bus.partitions=2", "raising the count is refused too")
}
