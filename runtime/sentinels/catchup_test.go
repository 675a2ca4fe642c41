package sentinels_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus"
	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/fake"
	"github.com/agentproto/sentinel/runtime/runtimetest"
	"github.com/agentproto/sentinel/runtime/sentinels"
)

// startClustered starts an env whose store reads through the records
// bucket's leader, as a node of a cluster does. The mirror's supervisor
// asks for the bucket's stream state, as a catch-up does, every
// mirror check (10 s by default): a test slowed past it by a loaded
// machine counted the supervisor's look as a catch-up, so here it looks
// once an hour.
func startClustered(t *testing.T) *runtimetest.Env {
	t.Helper()
	return runtimetest.Start(t, runtimetest.Options{NoWorkers: true, LeaderReads: true,
		Store: []sentinels.StoreOption{sentinels.WithMirrorCheck(time.Hour)}})
}

// catchUps counts the record mirror's catch-ups from now on (each asks
// the records bucket's stream for its state).
func catchUps(t *testing.T, e *runtimetest.Env) *atomic.Int64 {
	t.Helper()
	var n atomic.Int64
	sub, err := e.Bus.NC.Subscribe("$JS.API.STREAM.INFO."+bus.KVStream(sentinels.BucketRecords), func(*nats.Msg) { n.Add(1) })
	require.NoError(t, err)
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	require.NoError(t, e.Bus.NC.Flush())
	return &n
}

func signedPush(e *runtimetest.Env, key, eventID string) providers.Inbound {
	subject := "github:acme/widgets#7"
	ev := sentinel.NewEvent(eventID, "//agentproto.local/sentinel/test", "github.check_suite.completed", subject, []string{subject},
		e.Clock.Now(), "check suite completed", false, map[string]any{"id": eventID})
	body, _ := json.Marshal(ev)
	h := http.Header{}
	h.Set(fake.SignatureHeader, e.Fake.Sign(body))
	return providers.Inbound{HookKey: key, Body: body, Header: h, Now: e.Clock.Now()}
}

// A push request for a known hook key catches the record mirror up once
// (in Inbound), not once per step: KnownHook answers a key the mirror
// knows from the mirror.
func TestPushRequestCatchesTheMirrorUpOnce(t *testing.T) {
	e := startClustered(t)
	rec := e.Watch(req("fake"))
	key := providers.HookKeyOf(rec.Handle)
	require.True(t, strings.HasPrefix(key, "fk-"))
	syncs := catchUps(t, e)
	ctx := context.Background()

	known, err := e.Service.KnownHook(ctx, key)
	require.NoError(t, err)
	require.True(t, known)
	res, err := e.Service.Inbound(ctx, signedPush(e, key, "evt_1"))
	require.NoError(t, err)
	require.Equal(t, 1, res.Delivered)
	require.NoError(t, e.Bus.NC.Flush())
	require.Equal(t, int64(1), syncs.Load(), "one catch-up for the whole request")
}

// A hook key the mirror does not know yet (another node created its
// sentinel a moment ago) is known once the mirror caught up, and its
// events are stored.
func TestPushForASentinelAnotherNodeJustCreated(t *testing.T) {
	e := startClustered(t)
	syncs := catchUps(t, e)
	ctx := context.Background()
	other := sentinels.NewStore(e.Buckets.Records) // another node: no mirror of ours sees its write first
	for i := range 20 {
		id := sentinel.NewSentinelID()
		key := "fk-" + strings.ToLower(id)
		require.NoError(t, other.Create(ctx, &sentinel.Sentinel{ID: id, Provider: "fake", Status: sentinel.StatusActive,
			Spec:   sentinel.Spec{Target: sentinel.Target{Kind: sentinel.TargetSession, SessionID: "s1"}},
			Handle: sentinel.Handle{State: map[string]any{"hookKey": key}}}))
		before := syncs.Load()
		known, err := e.Service.KnownHook(ctx, key)
		require.NoError(t, err)
		require.True(t, known, "create %d is known at once", i)
		res, err := e.Service.Inbound(ctx, signedPush(e, key, fmt.Sprintf("evt_%d", i)))
		require.NoError(t, err)
		require.Equal(t, 1, res.Sentinels)
		require.Equal(t, 1, res.Delivered)
		require.NoError(t, e.Bus.NC.Flush())
		require.LessOrEqual(t, syncs.Load()-before, int64(2), "at most one catch-up per step")
	}
	unknown, err := e.Service.KnownHook(ctx, "fk-nobody")
	require.NoError(t, err)
	require.False(t, unknown)
	_, err = e.Service.Inbound(ctx, signedPush(e, "fk-nobody", "evt_x"))
	require.ErrorIs(t, err, providers.ErrUnknownHook)
}

// SyncMirror returns once the watcher delivered the write it waits for
// (woken by the watcher, not polling), and at once without a mirror.
func TestSyncMirrorWakesWhenTheWatcherArrives(t *testing.T) {
	e := runtimetest.Start(t, runtimetest.Options{NoWorkers: true})
	ctx := context.Background()
	other := sentinels.NewStore(e.Buckets.Records)
	id := sentinel.NewSentinelID()
	require.NoError(t, other.Create(ctx, &sentinel.Sentinel{ID: id, Status: sentinel.StatusActive}))
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	require.NoError(t, e.Store.SyncMirror(sctx))
	_, _, err := e.Store.Peek(ctx, id)
	require.NoError(t, err)

	e.Store.StopCache()
	require.NoError(t, e.Store.SyncMirror(ctx), "without a mirror there is nothing to wait for")
}

// A push for a key the mirror knows is stored for the sentinels the
// mirror binds to it while the mirror catches up, and for every sentinel
// the catch-up adds (another node bound one more to the key a moment ago)
// before the answer: each push reaches every sentinel created before it.
func TestPushReachesASentinelTheCatchUpAdds(t *testing.T) {
	e := startClustered(t)
	syncs := catchUps(t, e)
	ctx := context.Background()
	other := sentinels.NewStore(e.Buckets.Records)
	key := "fk-shared-key"
	create := func() string {
		id := sentinel.NewSentinelID()
		require.NoError(t, other.Create(ctx, &sentinel.Sentinel{ID: id, Provider: "fake", Status: sentinel.StatusActive,
			Spec:   sentinel.Spec{Target: sentinel.Target{Kind: sentinel.TargetSession, SessionID: "s1"}},
			Handle: sentinel.Handle{State: map[string]any{"hookKey": key}}}))
		return id
	}
	create()
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	require.NoError(t, e.Store.SyncMirror(sctx))
	for i := range 10 {
		create()
		before := syncs.Load()
		res, err := e.Service.Inbound(ctx, signedPush(e, key, fmt.Sprintf("evt_%d", i)))
		require.NoError(t, err)
		require.Equal(t, i+2, res.Sentinels, "push %d: every sentinel bound to the key", i)
		require.Equal(t, i+2, res.Delivered, "push %d: stored for each", i)
		require.NoError(t, e.Bus.NC.Flush())
		require.Equal(t, int64(1), syncs.Load()-before, "one catch-up per request")
	}
}

// The review's attack: every push for a made-up hook key cost a JetStream
// request in a cluster. A key found unknown after a catch-up is answered
// from memory for a moment (the mirror is still asked first), and again
// with a catch-up once that moment is over.
func TestUnknownHookKeysAreRememberedBriefly(t *testing.T) {
	e := startClustered(t)
	syncs := catchUps(t, e)
	ctx := context.Background()
	for range 10 {
		known, err := e.Service.KnownHook(ctx, "fk-made-up")
		require.NoError(t, err)
		require.False(t, known)
	}
	require.NoError(t, e.Bus.NC.Flush())
	require.Equal(t, int64(1), syncs.Load(), "one catch-up for ten pushes of one unknown key")

	e.Clock.Advance(3 * time.Second)
	known, err := e.Service.KnownHook(ctx, "fk-made-up")
	require.NoError(t, err)
	require.False(t, known)
	require.NoError(t, e.Bus.NC.Flush())
	require.Equal(t, int64(2), syncs.Load(), "looked up again once the memory lapsed")

	// A key the mirror learns is known at once, remembered or not.
	rec := e.Watch(req("fake"))
	key := providers.HookKeyOf(rec.Handle)
	known, err = e.Service.KnownHook(ctx, key)
	require.NoError(t, err)
	require.True(t, known)
}
