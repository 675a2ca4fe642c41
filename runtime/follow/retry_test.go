package follow_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus/bustest"
	"github.com/agentproto/sentinel/runtime/follow"
	"github.com/agentproto/sentinel/runtime/inbox"
	"github.com/agentproto/sentinel/runtime/pause"
	"github.com/agentproto/sentinel/runtime/sessions"
)

// Issue 21, item 4: an election outlasting a few retries (they take 4-9 s)
// must not drop a lifecycle event. The follows consumer had MaxDeliver 5
// with a 1 s nak: the sixth failure dropped the event for good. Here its
// evaluation fails eight times (follow.PointEvaluate), then succeeds: the
// digest arrives and the event is acknowledged.
func TestALifecycleEventOutlivesALongElection(t *testing.T) {
	be := bustest.Start(t)
	ctx := context.Background()
	reg := registryOn(t, be.Bus, time.Now, slog.New(slog.NewTextHandler(io.Discard, nil)))
	for _, id := range []string{"chief", "w"} {
		_, _, err := reg.Register(ctx, sentinel.RegisterSession{ID: id})
		require.NoError(t, err)
	}
	points := pause.New()
	eng := engineOn(t, be.Bus, follow.RealClock{}, follow.WithRetry(10*time.Millisecond, 50*time.Millisecond), follow.WithPause(points))
	failed := points.Fail(follow.PointEvaluate, "w", 8, nil)
	_, _, err := eng.Upsert(ctx, sentinel.FollowRequest{Follower: "chief", Selector: sentinel.FollowSelector{All: true}, BatchMs: ms(0)}, "")
	require.NoError(t, err)
	require.NoError(t, eng.Start(ctx, lifecycleOf(t, be.Bus)))
	t.Cleanup(eng.Stop)

	raw, err := json.Marshal(sessions.LifecycleEvent{ID: "lc_w_1", Kind: "turn-end", SessionID: "w", Detail: "survived the election"})
	require.NoError(t, err)
	_, err = be.Bus.Publish(ctx, sessions.LifecycleSubject("w"), raw, "lc_w_1")
	require.NoError(t, err)

	var msgs []sentinel.Message
	bustest.Eventually(t, 20*time.Second, func() bool {
		msgs, _, err = inboxOf(t, be.Bus).Read(ctx, inbox.Query{SessionID: "chief", Limit: 10})
		return err == nil && len(msgs) == 1
	}, "the digest arrives after the failures (%d so far)", failed.Count())
	require.Contains(t, msgs[0].Text, "survived the election")
	require.Equal(t, 9, failed.Count(), "eight failures, then the evaluation")
	cons, err := lifecycleOf(t, be.Bus).Consumer(ctx, follow.ConsumerName)
	require.NoError(t, err)
	bustest.Eventually(t, 10*time.Second, func() bool {
		info, err := cons.Info(ctx)
		return err == nil && info.NumAckPending == 0 && info.NumPending == 0
	}, "the event is acknowledged")
}
