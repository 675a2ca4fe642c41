package poll_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/fake"
	"github.com/agentproto/sentinel/runtime/runtimetest"
)

// scribbler writes into the handle's State on every Poll and Ack, as a
// careless provider might.
type scribbler struct{ *fake.Provider }

func (s scribbler) Poll(ctx context.Context, h sentinel.Handle, limit int) (providers.PollResult, error) {
	h.State["scribbled"] = true
	return s.Provider.Poll(ctx, h, limit)
}

func (s scribbler) Ack(ctx context.Context, h sentinel.Handle, cursor string) error {
	h.State["acked"] = cursor
	return s.Provider.Ack(ctx, h, cursor)
}

// A tick reads the mirror's own records (no copies): what a provider does
// to the handle it is given stays out of the mirror and the bucket.
func TestATickKeepsTheMirrorOutOfTheProvidersReach(t *testing.T) {
	s := scribbler{fake.New(fake.Config{Slug: "scribbler"})}
	e := runtimetest.Start(t, runtimetest.Options{Extra: []providers.Provider{s}})
	rec := e.Watch(sentinel.WatchRequest{SessionID: "s1", Subject: pr, Types: []string{"*"}, Provider: "scribbler"})
	s.Emit(runtimetest.Event("evt_1", "a.b.c", pr, false))
	ctx := context.Background()
	e.Loop.PollNow(ctx)
	e.WaitInbox("s1", 1)
	e.Loop.PollNow(ctx)
	require.Equal(t, []string{"1"}, s.Acks())
	for _, got := range []*sentinel.Sentinel{e.Get(rec.ID), peek(t, e, rec.ID)} {
		require.Equal(t, "1", got.Handle.Cursor, "the cursor the poll moved is stored")
		require.NotContains(t, got.Handle.State, "scribbled")
		require.NotContains(t, got.Handle.State, "acked")
	}
}

func peek(t *testing.T, e *runtimetest.Env, id string) *sentinel.Sentinel {
	t.Helper()
	r, _, err := e.Store.Peek(context.Background(), id)
	require.NoError(t, err)
	return r
}
