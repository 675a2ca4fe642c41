package poll_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus/bustest"
	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/fake"
	"github.com/agentproto/sentinel/runtime/cluster"
	"github.com/agentproto/sentinel/runtime/poll"
	"github.com/agentproto/sentinel/runtime/runtimetest"
)

// upstream is a provider whose event ids depend on what it observed, as
// local-gh's do (a PR's state at the poll): a poll reports the state it
// sees when it differs from the cursor, under an id minted from it.
type upstream struct {
	*fake.Provider
	mu    sync.Mutex
	state string
}

func (u *upstream) set(s string) { u.mu.Lock(); u.state = s; u.mu.Unlock() }

func (u *upstream) Poll(_ context.Context, h sentinel.Handle, _ int) (providers.PollResult, error) {
	u.mu.Lock()
	s := u.state
	u.mu.Unlock()
	if s == h.Cursor {
		return providers.PollResult{Cursor: h.Cursor}, nil
	}
	ev := runtimetest.Event("evt_state_"+s, "github.pull_request.edited", pr, false)
	return providers.PollResult{Events: []sentinel.Event{ev}, Cursor: s}, nil
}

func (u *upstream) Ack(context.Context, sentinel.Handle, string) error { return nil }

// Issue 21, item 5: node A polls (it owns the sentinel's poll lease) and
// sees state s1, then pauses before publishing (poll.PointPolled). Its
// lease lapses, node B takes it over, sees s2 and publishes it. A wakes:
// it must not publish the intermediate state s1 after its successor's
// newer s2 (the ids differ, so the stream's dedup cannot help). Real
// leases on real buckets (runtime/cluster), lease and member TTLs of 1 s.
func TestAStalePollOwnerPublishesNothing(t *testing.T) {
	up := &upstream{Provider: fake.New(fake.Config{Slug: "gh"}), state: "s1"}
	opts := []bustest.Option{bustest.WithLeaseTTL(time.Second), bustest.WithMemberTTL(time.Second)}
	a := runtimetest.Start(t, runtimetest.Options{Extra: []providers.Provider{up}, BusOpts: opts, Node: "a", LeaderReads: true})
	b := runtimetest.Join(t, a, runtimetest.Options{Extra: []providers.Provider{up}, NoWorkers: true, Node: "b"})
	rec := a.Watch(sentinel.WatchRequest{SessionID: "s1", Subject: pr, Types: []string{"*"}, Provider: "gh"})
	key := cluster.PollKey(pr)

	nodeA := member(a, "a")
	nodeA.Round(context.Background()) // A, alone, takes every lease
	require.True(t, nodeA.OwnsPoll(key))
	loopA := a.NewLoop(poll.WithOwnership(nodeA))

	held := a.Pause.Hold(poll.PointPolled, rec.ID)
	stale := make(chan struct{})
	go func() { defer close(stale); loopA.PollNow(context.Background()) }()
	runtimetest.Reach(t, held, "A polled and saw s1")

	// A is paused: no heartbeat, no renewal. B takes the lease over once
	// A's keys aged out, and sees s2.
	up.set("s2")
	nodeB := member(b, "b")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); nodeB.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	bustest.Eventually(t, 20*time.Second, func() bool { return nodeB.OwnsPoll(key) }, "B owns the poll lease")
	b.NewLoop(poll.WithOwnership(nodeB)).PollNow(context.Background())
	require.Equal(t, "s2", b.Fresh(rec.ID).Handle.Cursor)

	held.Release()
	<-stale
	a.WaitInbox("s1", 1)
	a.Drained()
	var ids []string
	for _, m := range a.InboxOf("s1") {
		var ev sentinel.Event
		require.NoError(t, json.Unmarshal(m.Data, &ev))
		ids = append(ids, ev.ID)
	}
	require.Equal(t, []string{"evt_state_s2"}, ids, "only the successor's state was published")
	require.Equal(t, "s2", a.Fresh(rec.ID).Handle.Cursor)
}

// member is a cluster node on e's buckets with a fast heartbeat.
func member(e *runtimetest.Env, name string) *cluster.Node {
	t := e.T
	cfg := cluster.DefaultConfig(e.Bus.Bus.Cfg.MemberTTL, e.Bus.Bus.Cfg.LeaseTTL)
	cfg.Heartbeat = 100 * time.Millisecond
	return cluster.New(name, e.Bus.KeyValue(t, cluster.NodesBucket(e.Bus.Bus.Cfg.MemberTTL)), e.Bus.KeyValue(t, cluster.LeasesBucket(e.Bus.Bus.Cfg.LeaseTTL)), cfg)
}
