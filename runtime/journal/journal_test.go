package journal_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus/bustest"
	"github.com/agentproto/sentinel/runtime/journal"
)

type drops struct {
	mu sync.Mutex
	n  map[string]int
}

func (d *drops) add(reason string) { d.mu.Lock(); d.n[reason]++; d.mu.Unlock() }
func (d *drops) get(reason string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.n[reason]
}

func entry(sentinelID, eventID, decision string) sentinel.Decision {
	ev := sentinel.NewEvent(eventID, "//test", "a.b.c", "github:acme/widgets#7", nil, time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), "summary of "+eventID, false, nil)
	e := journal.FromEvent(sentinelID, &ev, decision, "")
	e.Ts = sentinel.FormatTime(time.Now())
	return e
}

// TestWriterNeverBlocksAndCountsWhatItDrops: with a full queue Record
// returns at once and counts an overflow; Stop publishes what was queued;
// a record after Stop counts as closed.
func TestWriterNeverBlocksAndCountsWhatItDrops(t *testing.T) {
	env := bustest.Start(t)
	ctx := context.Background()
	s, err := journal.OpenStream(ctx, env.Bus, env.Bus.Cfg.Replicas, time.Hour, 0)
	require.NoError(t, err)
	d := &drops{n: map[string]int{}}
	w, err := journal.NewWriter(env.Bus, journal.WriterConfig{QueueSize: 2, Node: "n1"}, journal.WithOnDrop(d.add))
	require.NoError(t, err)
	// Not started: nothing drains the queue.
	w.Record(entry("sen_a", "evt_1", journal.Delivered))
	w.Record(entry("sen_a", "evt_2", journal.Delivered))
	done := make(chan struct{})
	go func() { w.Record(entry("sen_a", "evt_3", journal.Delivered)); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Record blocked on a full queue")
	}
	require.Equal(t, 1, d.get(journal.DropOverflow))
	w.Start()
	require.NoError(t, w.Stop(ctx))
	w.Record(entry("sen_a", "evt_4", journal.Delivered))
	require.Equal(t, 1, d.get(journal.DropClosed))

	r := &journal.Reader{Stream: s}
	page, err := r.Sentinel(ctx, "sen_a", 10, 0)
	require.NoError(t, err)
	require.Len(t, page.Decisions, 2, "the queued entries are flushed at stop")
	require.Equal(t, "evt_1", page.Decisions[0].EventID)
	require.Equal(t, "n1", page.Decisions[0].Node)
	require.Zero(t, d.get(journal.DropPublish))
}

// TestReaderPagesAndStories: the newest limit decisions, pages after a
// cursor, an event's story across sentinels, and an empty answer at once.
func TestReaderPagesAndStories(t *testing.T) {
	env := bustest.Start(t)
	ctx := context.Background()
	j, err := journal.Open(ctx, env.Bus, env.Bus.Cfg.Replicas, journal.DefaultConfig(), journal.WriterConfig{})
	require.NoError(t, err)
	for i := 0; i < 10; i++ {
		j.Record(entry("sen_a", fmt.Sprintf("evt_%d", i), journal.Delivered))
	}
	j.Record(entry("sen_b", "evt_3", journal.Filtered))
	require.NoError(t, j.Stop(ctx))

	page, err := j.Sentinel(ctx, "sen_a", 3, 0)
	require.NoError(t, err)
	require.Equal(t, []string{"evt_7", "evt_8", "evt_9"}, ids(page.Decisions))
	require.Equal(t, page.Decisions[2].Seq, page.Next)

	first, err := j.Sentinel(ctx, "sen_a", 4, 0+1)
	require.NoError(t, err)
	require.Equal(t, []string{"evt_1", "evt_2", "evt_3", "evt_4"}, ids(first.Decisions))
	rest, err := j.Sentinel(ctx, "sen_a", 100, first.Next)
	require.NoError(t, err)
	require.Equal(t, []string{"evt_5", "evt_6", "evt_7", "evt_8", "evt_9"}, ids(rest.Decisions))
	tail, err := j.Sentinel(ctx, "sen_a", 100, rest.Next)
	require.NoError(t, err)
	require.Empty(t, tail.Decisions)
	require.Equal(t, rest.Next, tail.Next, "an empty page keeps the cursor")

	story, err := j.Event(ctx, "evt_3")
	require.NoError(t, err)
	require.Len(t, story, 2)
	require.Equal(t, "sen_a", story[0].SentinelID)
	require.Equal(t, "sen_b", story[1].SentinelID)
	require.Equal(t, journal.Filtered, story[1].Decision)

	start := time.Now()
	none, err := j.Event(ctx, "evt_unknown")
	require.NoError(t, err)
	require.Empty(t, none)
	require.Less(t, time.Since(start), 400*time.Millisecond, "an empty read answers without waiting for a fetch")

	var seen int
	firstTs, err := j.Since(ctx, time.Now().Add(-time.Hour), func(sentinel.Decision) bool { seen++; return true })
	require.NoError(t, err)
	require.Equal(t, 11, seen)
	require.False(t, firstTs.IsZero())
}

// TestJournalStreamIsAsyncPersistedAlone: a single-replica journal is
// flushed asynchronously (no fsync per write), with bounded retention.
func TestJournalStreamIsAsyncPersistedAlone(t *testing.T) {
	env := bustest.Start(t, bustest.WithSyncAlways(true))
	ctx := context.Background()
	s, err := journal.OpenStream(ctx, env.Bus, env.Bus.Cfg.Replicas, 2*time.Hour, 0)
	require.NoError(t, err)
	info, err := s.Info(ctx)
	require.NoError(t, err)
	require.Equal(t, 2*time.Hour, info.Config.MaxAge)
	require.Equal(t, jetstream.AsyncPersistMode, info.Config.PersistMode)
	// Provisioning again changes nothing; a new max age is applied.
	_, err = journal.OpenStream(ctx, env.Bus, env.Bus.Cfg.Replicas, 2*time.Hour, 0)
	require.NoError(t, err)
	s, err = journal.OpenStream(ctx, env.Bus, env.Bus.Cfg.Replicas, time.Hour, 0)
	require.NoError(t, err)
	require.Equal(t, time.Hour, s.CachedInfo().Config.MaxAge)
}

func ids(es []sentinel.Decision) []string {
	out := make([]string, 0, len(es))
	for _, e := range es {
		out = append(out, e.EventID)
	}
	return out
}

// TestJournalIsSharedByTheNodesOfACluster: a decision written on one node
// is read on another; the stream has the bus's replica count.
func TestJournalIsSharedByTheNodesOfACluster(t *testing.T) {
	// One partition: nodes provisioning at once never see a partial consumer set.
	envs := bustest.StartCluster(t, 3, bustest.WithPartitions(1))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var js []*journal.Journal
	for _, env := range envs {
		j, err := journal.Open(ctx, env.Bus, env.Bus.Cfg.Replicas, journal.DefaultConfig(), journal.WriterConfig{Node: env.Server.Name()})
		require.NoError(t, err)
		t.Cleanup(func() { _ = j.Stop(context.Background()) })
		js = append(js, j)
	}
	require.Equal(t, 3, js[0].Stream.CachedInfo().Config.Replicas)
	require.Equal(t, jetstream.DefaultPersistMode, js[0].Stream.CachedInfo().Config.PersistMode)
	js[0].Record(entry("sen_c", "evt_c", journal.Delivered))
	bustest.Eventually(t, 30*time.Second, func() bool {
		story, err := js[2].Event(ctx, "evt_c")
		return err == nil && len(story) == 1
	}, "node 3 to read node 1's decision")
}

// TestSentinelReadRefusesWildcards: a sentinel id is one subject token; a
// wildcard never widens the read to other sentinels' decisions.
func TestSentinelReadRefusesWildcards(t *testing.T) {
	env := bustest.Start(t)
	ctx := context.Background()
	j, err := journal.Open(ctx, env.Bus, env.Bus.Cfg.Replicas, journal.DefaultConfig(), journal.WriterConfig{})
	require.NoError(t, err)
	j.Record(entry("sen_a", "evt_1", journal.Delivered))
	require.NoError(t, j.Stop(ctx))
	for _, id := range []string{"*", ">", "sen_a.x", "sen a", ""} {
		page, err := j.Sentinel(ctx, id, 10, 0)
		require.NoError(t, err)
		require.Empty(t, page.Decisions, id)
	}
	page, err := j.Sentinel(ctx, "sen_a", 10, 0)
	require.NoError(t, err)
	require.Len(t, page.Decisions, 1)
}

// Issue 21, item 10: the journal had only a max age, so a burst could fill
// nats.max_store and the storage guard would then refuse real writes.
// journal.max_bytes bounds it: past it the oldest decisions go.
func TestTheJournalIsBoundedInBytes(t *testing.T) {
	env := bustest.Start(t)
	ctx := context.Background()
	const limit = 1 << 20
	s, err := journal.OpenStream(ctx, env.Bus, env.Bus.Cfg.Replicas, time.Hour, limit)
	require.NoError(t, err)
	pad := strings.Repeat("x", 4096)
	for i := range 600 { // about 2.4 MiB
		_, err := env.JS.Publish(ctx, journal.Subject("sen_a", fmt.Sprintf("evt_%d", i)), []byte(pad))
		require.NoError(t, err)
	}
	info, err := s.Info(ctx)
	require.NoError(t, err)
	require.LessOrEqual(t, info.State.Bytes, uint64(limit))
	require.Equal(t, uint64(600), info.State.LastSeq, "the newest decisions are kept")
	require.Greater(t, info.State.FirstSeq, uint64(1), "the oldest went")
	require.Error(t, journal.Config{MaxAge: time.Hour, MaxBytes: 1000}.Validate(), "below 1 MiB is refused")
}

// The default size bound is a tenth of JetStream's storage limit (which
// reserves a stream's MaxBytes against it), within 1 MiB .. 256 MiB.
func TestTheJournalsDefaultSizeFollowsTheStorageLimit(t *testing.T) {
	require.Equal(t, journal.DefaultMaxBytesCap, journal.DefaultMaxBytes(0), "unknown limit")
	require.Equal(t, int64(10<<20), journal.DefaultMaxBytes(100<<20))
	require.Equal(t, int64(1<<20), journal.DefaultMaxBytes(4<<20))
	require.Equal(t, journal.DefaultMaxBytesCap, journal.DefaultMaxBytes(100<<30))
}
