package sentinels_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/fake"
	"github.com/agentproto/sentinel/runtime/runtimetest"
	"github.com/agentproto/sentinel/runtime/sentinels"
)

func TestTombstoneOfARemovalInFlightIsKept(t *testing.T) {
	e := runtimetest.Start(t, runtimetest.Options{NoWorkers: true})
	ctx := context.Background()
	rec := e.Watch(req("fake"))
	// A removal records its failed cancel before it deletes the record: a
	// sweep in between sees both.
	require.NoError(t, e.Expirer.Tombstones().Add(ctx, rec.ID, "fake", rec.Handle, errors.New("timeout")))
	e.Clock.Advance(sentinels.TombstoneBase)
	e.Loop.PollNow(ctx)
	ts, err := e.Expirer.Tombstones().List(ctx)
	require.NoError(t, err)
	require.Len(t, ts, 1, "the tombstone of a removal in flight is not taken for a re-subscribe")
	require.Empty(t, e.Fake.Cancels(), "nor run while its sentinel is still live")

	require.NoError(t, e.Store.Delete(ctx, rec.ID)) // the removal completes
	e.Loop.PollNow(ctx)
	require.Equal(t, []string{rec.Handle.RemoteID}, e.Fake.Cancels(), "the remote is cancelled, not leaked")
	ts, _ = e.Expirer.Tombstones().List(ctx)
	require.Empty(t, ts)
}

func TestTombstoneSweepReadsTheBucketNotTheMirror(t *testing.T) {
	e := runtimetest.Start(t, runtimetest.Options{NoWorkers: true})
	ctx := context.Background()
	rec := e.Watch(req("fake"))
	// Another node removes the sentinel (its cancel failed); this node's
	// mirror learns of the delete only through its watcher.
	other := sentinels.NewStore(e.Buckets.Records)
	require.NoError(t, e.Expirer.Tombstones().Add(ctx, sentinel.NewSentinelID(), "fake", rec.Handle, errors.New("timeout")))
	require.NoError(t, other.Delete(ctx, rec.ID))
	e.Clock.Advance(sentinels.TombstoneBase)
	e.Expirer.Tombstones().Sweep(ctx, e.Registry, e.Store)
	require.Equal(t, []string{rec.Handle.RemoteID}, e.Fake.Cancels(), "a record gone from the bucket owns nothing")
	ts, err := e.Expirer.Tombstones().List(ctx)
	require.NoError(t, err)
	require.Empty(t, ts)
}

// unanswered is a provider whose remote never answers a cancel.
type unanswered struct{ *fake.Provider }

func (unanswered) Cancel(ctx context.Context, _ sentinel.Handle) error {
	<-ctx.Done()
	return ctx.Err()
}

func TestExpiryCancelGoesThroughABoundedTombstone(t *testing.T) {
	slow := unanswered{fake.New(fake.Config{Slug: "slow"})}
	e := runtimetest.Start(t, runtimetest.Options{NoWorkers: true, Extra: []providers.Provider{slow},
		Tombstones: []sentinels.TombstonesOption{sentinels.WithTombstonesCancelTimeout(50 * time.Millisecond)}})
	ctx := context.Background()
	r := req("slow")
	r.Until = &sentinel.UntilArg{Until: sentinel.Until{Kind: sentinel.UntilAt, Ms: e.Clock.Now().Add(time.Minute).UnixMilli()}}
	rec := e.Watch(r)
	e.Clock.Advance(2 * time.Minute)

	n, err := e.Expirer.Sweep(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, sentinel.StatusExpired, e.Get(rec.ID).Status)
	ts, err := e.Expirer.Tombstones().List(ctx)
	require.NoError(t, err)
	require.Len(t, ts, 1, "the expiry's cancel is recorded, not run in place")
	require.Equal(t, rec.ID, ts[0].SentinelID)
	require.Zero(t, ts[0].Attempts)

	start := time.Now()
	e.Expirer.Tombstones().Sweep(ctx, e.Registry, e.Store)
	require.Less(t, time.Since(start), 5*time.Second, "each cancel is bounded by CancelTimeout")
	ts, _ = e.Expirer.Tombstones().List(ctx)
	require.Len(t, ts, 1)
	require.Equal(t, 1, ts[0].Attempts)
	require.Contains(t, ts[0].LastError, "deadline exceeded")
	require.Equal(t, e.Clock.Now().Add(sentinels.TombstoneBase).UnixMilli(), ts[0].NextAtMs, "backed off")
}
