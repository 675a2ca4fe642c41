package follow_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus"
	"github.com/agentproto/sentinel/bus/bustest"
	"github.com/agentproto/sentinel/runtime/follow"
	"github.com/agentproto/sentinel/runtime/inbox"
	"github.com/agentproto/sentinel/runtime/sessions"
)

// engineOn is one node's follow engine over b, on clock.
func engineOn(t testing.TB, b *bus.Bus, clock follow.Clock, opts ...follow.Option) *follow.Engine {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	reg := registryOn(t, b, clock.Now, log)
	runner := sessions.NewHookRunner()
	n := sessions.NewNotifier(reg, runner, sessions.WithNotifierLogger(log))
	inboxes := inboxesOn(t, b, inboxOf(t, b), reg, n)
	res := sessions.NewResolver(reg, runner, sessions.WithResolverLogger(log))
	eng, err := follow.NewEngine(follow.Deps{Store: follow.NewStore(followsOf(t, b)), Registry: reg, Resolver: res, Append: inboxes.Append, Park: parkOf(t, b, clock.Now)},
		append([]follow.Option{follow.WithClock(clock), follow.WithLogger(log), follow.WithAckWait(time.Second)}, opts...)...)
	require.NoError(t, err)
	return eng
}

// A lifecycle event is acknowledged only once its digest is delivered: a
// node lost with the batch still pending loses nothing, the next node
// gets the event again and sends the digest, and the message is then
// acknowledged.
func TestAPendingBatchOfALostNodeIsDeliveredByTheNext(t *testing.T) {
	be := bustest.Start(t)
	ctx := context.Background()
	reg := registryOn(t, be.Bus, time.Now, slog.New(slog.NewTextHandler(io.Discard, nil)))
	for _, id := range []string{"chief", "w"} {
		_, _, err := reg.Register(ctx, sentinel.RegisterSession{ID: id})
		require.NoError(t, err)
	}

	// Node A: its own connection, a clock that never fires its batch.
	ncA, err := be.Server.Connect("node-a")
	require.NoError(t, err)
	busA, err := bus.Open(ctx, ncA, be.Bus.Cfg)
	require.NoError(t, err)
	clockA := newFakeClock()
	a := engineOn(t, busA, clockA)
	_, _, err = a.Upsert(ctx, sentinel.FollowRequest{Follower: "chief", Selector: sentinel.FollowSelector{All: true}, BatchMs: ms(60000)}, "")
	require.NoError(t, err)
	require.NoError(t, a.Start(ctx, lifecycleOf(t, busA)))

	raw, err := json.Marshal(sessions.LifecycleEvent{Kind: "turn-end", SessionID: "w", Detail: "kept across a node loss"})
	require.NoError(t, err)
	_, err = be.Bus.Publish(ctx, sessions.LifecycleSubject("w"), raw, "")
	require.NoError(t, err)
	bustest.Eventually(t, 10*time.Second, func() bool { return len(a.Pending()) == 1 }, "node A batches the event")
	// Held past three ack waits, unacknowledged: A's in-progress marks
	// keep JetStream from redelivering it meanwhile.
	cons, err := lifecycleOf(t, be.Bus).Consumer(ctx, follow.ConsumerName)
	require.NoError(t, err)
	for held := time.Now(); time.Since(held) < 3*a.AckWait(); {
		info, err := cons.Info(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, info.NumAckPending, "the event is not acknowledged while its batch waits")
		require.Zero(t, info.NumRedelivered, "nor redelivered while A marks it in progress")
		<-time.After(100 * time.Millisecond)
	}

	ncA.Close() // node A is lost with its batch

	clockB := newFakeClock()
	b := engineOn(t, be.Bus, clockB)
	require.NoError(t, b.Start(ctx, lifecycleOf(t, be.Bus)))
	t.Cleanup(b.Stop)
	bustest.Eventually(t, 15*time.Second, func() bool { return len(b.Pending()) == 1 }, "node B gets the event again")
	clockB.Advance(time.Minute)
	msgs, _, err := inboxOf(t, be.Bus).Read(ctx, inbox.Query{SessionID: "chief", Limit: 10})
	require.NoError(t, err)
	require.Len(t, msgs, 1)
	require.True(t, strings.Contains(msgs[0].Text, "kept across a node loss"), msgs[0].Text)
	bustest.Eventually(t, 10*time.Second, func() bool {
		info, err := cons.Info(ctx)
		return err == nil && info.NumAckPending == 0 && info.NumPending == 0
	}, "the event is acknowledged once its digest is delivered")
	a.Stop()
}
