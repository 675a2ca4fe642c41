package agentpush_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
)

func TestPollAndAckShapes(t *testing.T) {
	f := newFixture(t, nil)
	h := f.create(t, "github:acme/api#7")
	for _, id := range []string{"ev-1", "ev-2", "ev-3"} {
		f.srv.Enqueue(h.RemoteID, event(id))
	}
	f.srv.ResetRequests()

	res, err := f.p.Poll(context.Background(), h, 5000)
	require.NoError(t, err)
	require.Equal(t, []string{"ev-1", "ev-2", "ev-3"}, eventIDs(res.Events))
	require.Equal(t, "3", res.Cursor)
	require.Empty(t, res.Malformed)
	for i, ev := range res.Events {
		require.NotNil(t, ev.Seq)
		require.Equal(t, int64(i+1), *ev.Seq)
		want := event(ev.ID)
		want.Seq = ev.Seq
		require.Equal(t, want, ev, "the envelope passes through unchanged")
	}
	reqs := f.srv.Requests()
	require.Len(t, reqs, 1)
	require.Equal(t, "/subscriptions/sub_1/events", reqs[0].Path)
	require.Equal(t, "after=0&limit=1000", reqs[0].Query)

	require.NoError(t, f.p.Ack(context.Background(), h, res.Cursor))
	acks := f.srv.RequestsTo(http.MethodPost, "/subscriptions/sub_1/ack")
	require.Len(t, acks, 1)
	require.JSONEq(t, `{"upToSeq":3}`, string(acks[0].Body))
	require.Empty(t, f.srv.Pending(h.RemoteID))
}

func TestPollLimitIsClamped(t *testing.T) {
	f := newFixture(t, nil)
	h := f.create(t, "github:acme/api")
	h.Cursor = "41"
	for _, limit := range []int{0, -3} {
		_, err := f.p.Poll(context.Background(), h, limit)
		require.NoError(t, err)
	}
	for _, r := range f.srv.RequestsTo(http.MethodGet, "/subscriptions/sub_1/events") {
		require.Equal(t, "after=41&limit=1", r.Query)
	}
}

func TestEmptyTickSendsNoAck(t *testing.T) {
	f := newFixture(t, nil)
	h := f.create(t, "github:acme/api")
	res, err := f.p.Poll(context.Background(), h, 100)
	require.NoError(t, err)
	require.Empty(t, res.Events)
	require.Equal(t, "0", res.Cursor)
	for _, cursor := range []string{res.Cursor, "", "abc", "-1"} {
		require.NoError(t, f.p.Ack(context.Background(), h, cursor))
	}
	h.Cursor = "7"
	require.NoError(t, f.p.Ack(context.Background(), h, "7"))
	require.NoError(t, f.p.Ack(context.Background(), h, "5"))
	require.Empty(t, f.srv.RequestsTo(http.MethodPost, "/subscriptions/sub_1/ack"))
}

func TestMalformedItemsAreReportedAndPassed(t *testing.T) {
	f := newFixture(t, nil)
	h := f.create(t, "github:acme/api")
	f.srv.Enqueue(h.RemoteID, event("ev-1"))
	f.srv.EnqueueRaw(h.RemoteID, json.RawMessage(`{"specversion":"1.0","id":"ev-bad","data":{"secret":"payload-data"}}`))
	f.srv.EnqueueRaw(h.RemoteID, json.RawMessage(`"not an object"`))
	f.srv.Enqueue(h.RemoteID, event("ev-4"))

	res, err := f.p.Poll(context.Background(), h, 100)
	require.NoError(t, err)
	require.Equal(t, []string{"ev-1", "ev-4"}, eventIDs(res.Events))
	require.Equal(t, "4", res.Cursor, "the cursor moves past poison items")
	require.Len(t, res.Malformed, 2)

	bad := res.Malformed[0]
	require.Equal(t, int64(2), *bad.Seq)
	require.Equal(t, "dlv_sub_1_2", bad.RemoteDeliveryID)
	require.Equal(t, "envelope failed validation (invalid or missing: source, subject, subjects, summary, terminal, time, type)", bad.Error)
	item := `{"delivery_id":"dlv_sub_1_2","seq":2,"status":"pending","envelope":{"specversion":"1.0","id":"ev-bad","data":{"secret":"payload-data"}}}`
	sum := sha256.Sum256([]byte(item))
	require.Equal(t, hex.EncodeToString(sum[:]), bad.Digest)
	require.Equal(t, len(item), bad.Bytes)
	raw, err := json.Marshal(res.Malformed)
	require.NoError(t, err)
	require.NotContains(t, string(raw), "payload-data", "a malformed item never carries the data")

	require.Equal(t, int64(3), *res.Malformed[1].Seq)
	require.Equal(t, "envelope is not a JSON object", res.Malformed[1].Error)
}

func TestReServeAfterMissingAck(t *testing.T) {
	f := newFixture(t, nil)
	h := f.create(t, "github:acme/api#7")
	f.srv.Enqueue(h.RemoteID, event("ev-1"))
	f.srv.Enqueue(h.RemoteID, event("ev-2"))

	first, err := f.p.Poll(context.Background(), h, 100)
	require.NoError(t, err)
	// The daemon crashed before acking and persisting the cursor: the next
	// poll starts from the same cursor and gets the same event ids.
	again, err := f.p.Poll(context.Background(), h, 100)
	require.NoError(t, err)
	require.Equal(t, eventIDs(first.Events), eventIDs(again.Events))
	require.Equal(t, first.Cursor, again.Cursor)

	// Acked rows are never re-served, even if the cursor write was lost.
	require.NoError(t, f.p.Ack(context.Background(), h, again.Cursor))
	f.srv.Enqueue(h.RemoteID, event("ev-3"))
	lost, err := f.p.Poll(context.Background(), h, 100)
	require.NoError(t, err)
	require.Equal(t, []string{"ev-3"}, eventIDs(lost.Events))
	require.Equal(t, "3", lost.Cursor)

	// Restart from the persisted cursor continues without redelivery.
	h.Cursor = lost.Cursor
	res, err := f.p.Poll(context.Background(), h, 100)
	require.NoError(t, err)
	require.Empty(t, res.Events)
	require.Equal(t, "3", res.Cursor)
}

func TestPollErrors(t *testing.T) {
	f := newFixture(t, nil)
	h := f.create(t, "github:acme/api")
	f.srv.FailNext(http.StatusServiceUnavailable, 1)
	res, err := f.p.Poll(context.Background(), h, 10)
	require.Equal(t, providers.ReasonServer, providers.ReasonOf(err))
	require.ErrorContains(t, err, "agentpush GET /subscriptions/sub_1/events?after=0&limit=10 → HTTP 503")
	require.Equal(t, "0", res.Cursor)

	h.Cursor = "x"
	_, err = f.p.Poll(context.Background(), h, 10)
	require.ErrorContains(t, err, "not a sequence number")
}

func TestPushHandlesDoNotPollOrAck(t *testing.T) {
	f := newFixture(t, nil)
	h := sentinel.Handle{Provider: "agentpush", RemoteID: "sub_9", Cursor: "4", State: map[string]any{"mode": "push", "callbackSecret": "s", "hookKey": "k"}}
	res, err := f.p.Poll(context.Background(), h, 10)
	require.NoError(t, err)
	require.Equal(t, providers.PollResult{Cursor: "4"}, res)
	require.NoError(t, f.p.Ack(context.Background(), h, "9"))
	require.Empty(t, f.srv.Requests())
}
