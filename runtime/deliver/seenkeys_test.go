package deliver_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/runtime/deliver"
	"github.com/agentproto/sentinel/runtime/runtimetest"
)

// pushed is a webhook-shaped event: id evt_<delivery>, the body digest as
// its second dedup key.
func pushed(delivery, body string) sentinel.Event {
	ev := runtimetest.Event("evt_"+delivery, "github.pull_request_review.submitted", pr, false)
	ev.DedupKey = "evt_body" + body
	return ev
}

// TestSecondDedupKey: an event is a duplicate under its id or its body
// key. A redelivery (same id, same body) lands once; the same body under
// five new ids lands once; two bodies under one id land once, never twice.
func TestSecondDedupKey(t *testing.T) {
	e := runtimetest.Start(t, runtimetest.Options{NoWorkers: true})
	ctx := context.Background()
	p := e.Pipeline
	rec := watchPR(e, "s1", nil, pr)
	handle := func(ev sentinel.Event) deliver.Result {
		t.Helper()
		res, err := p.Handle(ctx, rec.ID, &ev)
		require.NoError(t, err)
		return res
	}
	require.Equal(t, deliver.ResultDelivered, handle(pushed("g1", "A")))
	require.Equal(t, deliver.ResultDuplicate, handle(pushed("g1", "A")), "GitHub's redelivery")
	for i := range 5 {
		require.Equal(t, deliver.ResultDuplicate, handle(pushed(fmt.Sprintf("fresh-%d", i), "A")), "a replay under a new delivery id")
	}
	require.Equal(t, deliver.ResultDuplicate, handle(pushed("g1", "B")), "another body under a handled delivery id")
	require.Equal(t, deliver.ResultDelivered, handle(pushed("g2", "C")), "a new delivery")
	require.Len(t, e.InboxOf("s1"), 2)
	got := e.Get(rec.ID)
	require.Equal(t, 2, got.EventCount)
	for _, k := range []string{"evt_g1", "evt_bodyA", "evt_g2", "evt_bodyC"} {
		require.True(t, got.HasSeen(k), k)
	}
}

// TestSecondDedupKeyPastTheRing: once the ring overflowed, both keys are
// looked up in the long window (a legacy id there included: a delivery
// handled when ids were the body digest is a duplicate by its body key).
func TestSecondDedupKeyPastTheRing(t *testing.T) {
	e := runtimetest.Start(t, runtimetest.Options{NoWorkers: true})
	ctx := context.Background()
	p := e.Pipeline
	rec := watchPR(e, "s1", nil, pr)
	// Handled under the old scheme: its id was its body digest.
	legacy := runtimetest.Event("evt_bodyL", "github.pull_request_review.submitted", pr, false)
	res, err := p.Handle(ctx, rec.ID, &legacy)
	require.NoError(t, err)
	require.Equal(t, deliver.ResultDelivered, res)
	first := pushed("g1", "A")
	_, err = p.Handle(ctx, rec.ID, &first)
	require.NoError(t, err)
	// Push both out of the ring into the long window.
	for i := range sentinel.MaxRecentSeen {
		ev := runtimetest.Event(fmt.Sprintf("filler_%d", i), "a.b.c", pr, false)
		_, err := p.Handle(ctx, rec.ID, &ev)
		require.NoError(t, err)
	}
	got := e.Get(rec.ID)
	require.False(t, got.HasSeen("evt_bodyL"))
	require.False(t, got.HasSeen("evt_bodyA"))
	for _, ev := range []sentinel.Event{pushed("redelivered-legacy", "L"), pushed("fresh", "A"), pushed("g1", "Z")} {
		res, err := p.Handle(ctx, rec.ID, &ev)
		require.NoError(t, err)
		require.Equal(t, deliver.ResultDuplicate, res, ev.ID)
	}
	require.Equal(t, 2+sentinel.MaxRecentSeen, e.Get(rec.ID).EventCount)
}

// TestLegacyDigestIDInTheRing: a record whose ring holds a body digest id
// (written before ids were evt_<X-GitHub-Delivery>) needs no rewrite: the
// redelivery of that delivery under its GUID is a duplicate by its body
// key.
func TestLegacyDigestIDInTheRing(t *testing.T) {
	e := runtimetest.Start(t, runtimetest.Options{NoWorkers: true})
	ctx := context.Background()
	rec := watchPR(e, "s1", nil, pr)
	_, err := e.Store.Update(ctx, rec.ID, func(r *sentinel.Sentinel) error {
		r.AddSeen("evt_bodyOld")
		r.SeenMarks++
		return nil
	})
	require.NoError(t, err)
	ev := pushed("72d3162e-cc78-11e3-81ab-4c9367dc0958", "Old")
	res, err := e.Pipeline.Handle(ctx, rec.ID, &ev)
	require.NoError(t, err)
	require.Equal(t, deliver.ResultDuplicate, res)
	require.Empty(t, e.InboxOf("s1"))
}
