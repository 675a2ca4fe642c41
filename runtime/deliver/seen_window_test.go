package deliver_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus/bustest"
	"github.com/agentproto/sentinel/runtime/deliver"
	"github.com/agentproto/sentinel/runtime/runtimetest"
	"github.com/agentproto/sentinel/runtime/sentinels"
)

// failingSeen is the seen bucket with writes that fail on demand: the
// crash between keeping an evicted id and committing the record.
type failingSeen struct {
	jetstream.KeyValue
	fail atomic.Bool
}

func (f *failingSeen) Create(ctx context.Context, key string, value []byte, opts ...jetstream.KVCreateOpt) (uint64, error) {
	if f.fail.Load() {
		return 0, errors.New("seen bucket unavailable")
	}
	return f.KeyValue.Create(ctx, key, value, opts...)
}

func (f *failingSeen) Put(ctx context.Context, key string, value []byte) (uint64, error) {
	if f.fail.Load() {
		return 0, errors.New("seen bucket unavailable")
	}
	return f.KeyValue.Put(ctx, key, value)
}

// fillRing gives the sentinel a full seen ring of old_0..old_999, as if it
// had handled them.
func fillRing(t *testing.T, e *runtimetest.Env, id string) {
	t.Helper()
	_, err := e.Store.Update(context.Background(), id, func(r *sentinel.Sentinel) error {
		for i := 0; i < sentinel.MaxRecentSeen; i++ {
			r.AddSeen(fmt.Sprintf("old_%d", i))
		}
		r.SeenMarks = sentinel.MaxRecentSeen
		return nil
	})
	require.NoError(t, err)
}

// TestEvictedIdIsKeptBeforeTheRecordCommits: an id the ring evicts is
// written to the long window before the record that drops it. A failure
// of that write fails the handle (the event is retried) instead of
// committing a record that forgot the id, after which a redelivery of it
// passed and was counted twice.
func TestEvictedIdIsKeptBeforeTheRecordCommits(t *testing.T) {
	e := runtimetest.Start(t, runtimetest.Options{NoWorkers: true})
	ctx := context.Background()
	fs := &failingSeen{KeyValue: e.Buckets.Seen}
	p, err := deliver.NewPipeline(deliver.PipelineDeps{Store: e.Store, Seen: sentinels.NewSeen(fs, sentinels.WithSeenClock(e.Clock.Now)), Registry: e.Registry,
		Router: e.Pipeline.Router(), Park: e.Park, Expirer: e.Expirer}, deliver.WithClock(e.Clock.Now))
	require.NoError(t, err)
	rec := watchPR(e, "s1", &sentinel.UntilArg{Until: sentinel.Until{Kind: sentinel.UntilCount, N: 3}}, pr)
	fillRing(t, e, rec.ID)

	fs.fail.Store(true)
	ev := runtimetest.Event("evt_new", "a.b.c", pr, false)
	_, err = p.Handle(ctx, rec.ID, &ev)
	require.ErrorContains(t, err, "seen bucket unavailable")
	got := e.Get(rec.ID)
	require.True(t, got.HasSeen("old_0"), "the record was not committed without its evicted id")
	require.Zero(t, got.EventCount)

	// The retry succeeds, and the evicted id is still known.
	fs.fail.Store(false)
	_, err = p.Handle(ctx, rec.ID, &ev)
	require.NoError(t, err)
	require.Equal(t, 1, e.Get(rec.ID).EventCount)
	old := runtimetest.Event("old_0", "a.b.c", pr, false)
	res, err := p.Handle(ctx, rec.ID, &old)
	require.NoError(t, err)
	require.Equal(t, deliver.ResultDuplicate, res)
	got = e.Get(rec.ID)
	require.Equal(t, 1, got.EventCount, "a redelivered old id is not counted again")
	require.Equal(t, sentinel.StatusActive, got.Status)
	require.Len(t, e.InboxOf("s1"), 1)
}

// TestFilteredMarksKeepEvictedIdsWithATTL: ids evicted by marks off the
// delivered path (filtered events, most of a webhook PR watch) land in the
// long window with a TTL, so it forgets them by itself.
func TestFilteredMarksKeepEvictedIdsWithATTL(t *testing.T) {
	e := runtimetest.Start(t, runtimetest.Options{NoWorkers: true})
	ctx := context.Background()
	window := e.Seen.WithTTL(time.Second)
	p, err := deliver.NewPipeline(deliver.PipelineDeps{Store: e.Store, Seen: window, Registry: e.Registry,
		Router: e.Pipeline.Router(), Park: e.Park, Expirer: e.Expirer}, deliver.WithClock(e.Clock.Now))
	require.NoError(t, err)
	rec := e.Watch(sentinel.WatchRequest{SessionID: "s1", Subject: pr, Types: []string{"github.pull_request.*"}, Provider: "fake"})
	fillRing(t, e, rec.ID)

	ev := runtimetest.Event("evt_ci", "github.check_suite.completed", pr, false)
	res, err := p.Handle(ctx, rec.ID, &ev)
	require.NoError(t, err)
	require.Equal(t, deliver.ResultFiltered, res)
	has, err := window.Has(ctx, rec.ID, "old_0")
	require.NoError(t, err)
	require.True(t, has, "the evicted id is in the long window")
	bustest.Eventually(t, 10*time.Second, func() bool {
		has, err := window.Has(ctx, rec.ID, "old_0")
		return err == nil && !has
	}, "the evicted id to expire")
}
