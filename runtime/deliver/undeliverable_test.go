package deliver_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/runtime/deliver"
	"github.com/agentproto/sentinel/runtime/inbox"
	"github.com/agentproto/sentinel/runtime/runtimetest"
)

// publishRaw stores an event for a sentinel the way an older node (one that
// did not clip summaries at ingest) would have: straight into the stream.
func publishRaw(t *testing.T, e *runtimetest.Env, sentinelID string, ev sentinel.Event) {
	t.Helper()
	raw, err := json.Marshal(ev)
	require.NoError(t, err)
	_, err = e.Bus.Bus.PublishEvent(context.Background(), sentinelID, ev.ID, raw)
	require.NoError(t, err)
}

// TestPoisonEventIsParkedAndItsPartitionMovesOn: an event whose inbox
// message can never be valid (a summary over the inbox text cap) used to
// be retried forever while the partition's other sentinels waited behind
// it (one message in flight per partition).
func TestPoisonEventIsParkedAndItsPartitionMovesOn(t *testing.T) {
	e := runtimetest.Start(t, runtimetest.Options{Partitions: 1})
	poisoned := watchPR(e, "s1", nil, pr)
	other := watchPR(e, "s2", nil, "github:acme/other#1")

	bad := runtimetest.Event("evt_poison", "a.b.c", pr, false)
	bad.Summary = strings.Repeat("x", inbox.MaxTextBytes+1)
	publishRaw(t, e, poisoned.ID, bad)
	good := runtimetest.Event("evt_good", "a.b.c", "github:acme/other#1", false)
	_, err := e.Publisher.Publish(context.Background(), other.ID, []sentinel.Event{good}, "test")
	require.NoError(t, err)

	msgs := e.WaitInbox("s2", 1)
	require.Contains(t, string(msgs[0].Data), "evt_good")
	e.Drained()
	require.Empty(t, e.InboxOf("s1"))
	parked, err := e.Park.List(context.Background(), poisoned.ID, 10)
	require.NoError(t, err)
	require.Len(t, parked, 1)
	require.Equal(t, "evt_poison", parked[0].Event.ID)
	require.Contains(t, parked[0].Reason, "undeliverable")
	require.Contains(t, parked[0].Reason, "message text is longer than")
	got := e.Get(poisoned.ID)
	require.True(t, got.HasSeen("evt_poison"), "a parked event is marked seen")
	require.Zero(t, got.EventCount, "and not counted")
}

// TestSummariesAreClippedAtIngest: the publisher clips a long summary, so
// the event is delivered instead of being refused by the inbox.
func TestSummariesAreClippedAtIngest(t *testing.T) {
	e := runtimetest.Start(t, runtimetest.Options{})
	rec := watchPR(e, "s1", nil, pr)
	ev := runtimetest.Event("evt_long", "a.b.c", pr, false)
	ev.Summary = strings.Repeat("é", 50_000) // 100 KB of two-byte runes
	_, err := e.Publisher.Publish(context.Background(), rec.ID, []sentinel.Event{ev}, "test")
	require.NoError(t, err)
	require.Len(t, ev.Summary, 100_000, "the caller's event is untouched")
	msgs := e.WaitInbox("s1", 1)
	text := msgs[0].Text
	require.LessOrEqual(t, len(text), len("[github] ")+sentinel.MaxSummaryBytes)
	require.True(t, utf8.ValidString(text))
	require.True(t, strings.HasSuffix(text, "…"))
	require.Equal(t, 1, e.Get(rec.ID).EventCount)
}

// alwaysFailing is a router whose deliveries always fail (transiently, as
// far as the workers can tell).
type alwaysFailing struct {
	calls atomic.Int32
	for_  string
	inner deliver.Router
}

func (a *alwaysFailing) Route(ctx context.Context, rec *sentinel.Sentinel, ev *sentinel.Event) (deliver.Outcome, error) {
	if ev.ID != a.for_ {
		return a.inner.Route(ctx, rec, ev)
	}
	a.calls.Add(1)
	return deliver.Outcome{}, errors.New("inbox unavailable")
}

// TestAttemptsAreBoundedByTheDeliveryCount: a failure that keeps coming
// back is parked after delivery.max_attempts deliveries, and the events
// behind it flow again.
func TestAttemptsAreBoundedByTheDeliveryCount(t *testing.T) {
	r := &alwaysFailing{for_: "evt_stuck"}
	e := runtimetest.Start(t, runtimetest.Options{Router: r, NoWorkers: true, Partitions: 1,
		Delivery: &deliver.WorkersConfig{RetryBase: 20 * time.Millisecond, RetryMax: 100 * time.Millisecond, HandleTimeout: 10 * time.Second, MaxAttempts: 3}})
	r.inner = deliver.NewDirectRouter(e.Inbox, deliver.WithDirectRouterClock(func() time.Time { return time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC) }))
	require.NoError(t, e.Workers.Start(context.Background()))
	t.Cleanup(e.Workers.Stop)
	rec := watchPR(e, "s1", nil, pr)
	e.Fake.Emit(runtimetest.Event("evt_stuck", "a.b.c", pr, false), runtimetest.Event("evt_next", "a.b.c", pr, false))
	e.Loop.PollNow(context.Background())

	msgs := e.WaitInbox("s1", 1)
	require.Contains(t, string(msgs[0].Data), "evt_next")
	e.Drained()
	require.EqualValues(t, 3, r.calls.Load(), "exactly max_attempts deliveries")
	parked, err := e.Park.List(context.Background(), rec.ID, 10)
	require.NoError(t, err)
	require.Len(t, parked, 1)
	require.Equal(t, "evt_stuck", parked[0].Event.ID)
	require.Contains(t, parked[0].Reason, "undeliverable after 3 attempts: ")
	require.Contains(t, parked[0].Reason, "inbox unavailable")
	got := e.Get(rec.ID)
	require.True(t, got.HasSeen("evt_stuck"))
	require.Equal(t, 1, got.EventCount)
}

func TestPermanentClassification(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{name: "nil", err: nil, want: false},
		{name: "transient", err: errors.New("inbox unavailable"), want: false},
		{name: "marked", err: errors.Join(errors.New("x"), deliver.ErrPermanent), want: true},
		{name: "invalid message", err: sentinel.Errorf(sentinel.CodeInvalidInput, "message text is longer than 65536 bytes"), want: true},
		{name: "invalid recipient", err: sentinel.Errorf(sentinel.CodeInvalidSessionID, "bad"), want: true},
		{name: "over the max payload", err: fmt.Errorf("bus: publish inbox message: %w", nats.ErrMaxPayload), want: true},
		{name: "not alive is not permanent", err: sentinel.Errorf(sentinel.CodeSessionNotAlive, "x"), want: false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, deliver.Permanent(tc.err))
		})
	}
}
