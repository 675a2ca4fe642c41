package runtimetest

import (
	"context"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/runtime/sentinels"
)

// SilentLeader makes e's record reads through the bucket's leader go, for
// as long as silent says so, where a subscriber takes them and never
// answers: a leader just SIGKILLed, whose successor is not elected yet
// (the live servers answer nothing and send no "no responders"). Other
// reads go to the leader as before. One server's JetStream API answers
// every stream name, so bus.LeaderLast itself cannot be pointed at a
// silent leader; the read is the same kind of NATS request. The returned
// subscription receives each silenced read: NextMsg waits for one.
func (e *Env) SilentLeader(t testing.TB, silent func() bool) *nats.Subscription {
	t.Helper()
	nc := e.Bus.NC
	const subject = "test.dead-leader.msg-get"
	sub, err := nc.SubscribeSync(subject)
	require.NoError(t, err)
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	live := sentinels.BusLeaderGet(e.Bus.Bus)
	e.Store.LeaderGet = func(ctx context.Context, id string) ([]byte, uint64, error) {
		if silent() {
			_, err := nc.RequestWithContext(ctx, subject, []byte(id))
			return nil, 0, err
		}
		return live(ctx, id)
	}
	return sub
}
