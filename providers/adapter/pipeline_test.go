package adapter_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/adapter"
	"github.com/agentproto/sentinel/providers/adapter/adaptertest"
	"github.com/agentproto/sentinel/runtime/runtimetest"
	"github.com/agentproto/sentinel/runtime/sentinels"
)

// TestAdapterEventsThroughThePipeline: a feed adapter's events are polled
// by the node's poll loop and delivered to the session's inbox by the
// same pipeline as a built-in's, with the adapter's default types.
func TestAdapterEventsThroughThePipeline(t *testing.T) {
	f := newFeed(t, "feed", "", nil, "")
	e := runtimetest.Start(t, runtimetest.Options{Extra: []providers.Provider{f.P}})
	ctx := context.Background()
	rec := e.Watch(sentinel.WatchRequest{SessionID: "s1", Subject: "feed:a", Provider: "feed"})
	adaptertest.WriteFeed(t, f.Feed,
		adaptertest.Line{Subject: "feed:a", Type: "feed.opened", ID: "e1", Summary: "opened"},
		adaptertest.Line{Subject: "feed:a", Type: "other.ignored", ID: "e2", Summary: "not a default type"},
		adaptertest.Line{Subject: "feed:a", Type: "feed.closed", ID: "e3", Summary: "closed", Terminal: true})
	e.Loop.PollNow(ctx)
	msgs := e.WaitInbox("s1", 2)
	e.Drained()
	require.Len(t, e.InboxOf("s1"), 2, "the event outside the default types is filtered")
	require.Contains(t, msgs[0].Text, "opened")
	require.Equal(t, "3", e.Get(rec.ID).Handle.Cursor)
}

// TestHungAdapterDoesNotStallThePollLoop: one tick with a hung adapter's
// sentinel and a built-in's costs one call timeout and delivers the
// built-in's event; the next tick does not wait on the adapter at all (it
// is refused at once within its restart backoff).
func TestHungAdapterDoesNotStallThePollLoop(t *testing.T) {
	cfg := testConfig()
	cfg.CallTimeout = time.Second
	f := newFeed(t, "hung", adaptertest.ModeHangPoll, &cfg, "")
	e := runtimetest.Start(t, runtimetest.Options{Extra: []providers.Provider{f.P}})
	ctx := context.Background()
	hung := e.Watch(sentinel.WatchRequest{SessionID: "s1", Subject: "feed:a", Provider: "hung"})
	const pr = "github:acme/widgets#7"
	e.Watch(sentinel.WatchRequest{SessionID: "s2", Subject: pr, Types: []string{"*"}, Provider: "fake"})

	e.Fake.Emit(runtimetest.Event("evt_1", "a.b.c", pr, false))
	e.Loop.PollNow(ctx)
	e.WaitInbox("s2", 1)
	require.Contains(t, e.Get(hung.ID).LastError, "poll got no answer within 1s")

	e.Fake.Emit(runtimetest.Event("evt_2", "a.b.c", pr, false))
	e.Loop.PollNow(ctx)
	e.WaitInbox("s2", 2)
	require.Contains(t, e.Get(hung.ID).LastError, adapter.ErrUnavailable.Error())
	require.Equal(t, 1, f.P.Process().State().Starts, "no restart within the backoff: the second tick never waited on the adapter")
}

// TestPushAdapterThroughIngress: a push adapter's sentinel is bound to the
// hook key the node minted; a signed request for it is verified and parsed
// by the adapter and its events delivered through the pipeline; a forged
// one is refused with the adapter's 401.
func TestPushAdapterThroughIngress(t *testing.T) {
	const pub = "https://sentinel.example"
	f := newFeed(t, "pfeed", adaptertest.ModePush, nil, pub)
	e := runtimetest.Start(t, runtimetest.Options{Extra: []providers.Provider{f.P},
		Service: []sentinels.Option{sentinels.WithPublicURL(func() providers.PublicURL { return providers.PublicURL{URL: pub, Stable: true} })}})
	ctx := context.Background()
	rec := e.Watch(sentinel.WatchRequest{SessionID: "s1", Subject: "feed:a", Provider: "pfeed"})
	key := providers.HookKeyOf(rec.Handle)
	require.NotEmpty(t, key)

	body := []byte(`[{"subject":"feed:a","type":"feed.pushed","id":"p1","summary":"pushed one"}]`)
	hdr := http.Header{}
	hdr.Set(adaptertest.SignatureHeader, adaptertest.Sign(testToken, body))
	res, err := e.Service.Inbound(ctx, providers.Inbound{HookKey: key, Body: body, Header: hdr, Now: e.Clock.Now()})
	require.NoError(t, err)
	require.Equal(t, 1, res.Delivered)
	msgs := e.WaitInbox("s1", 1)
	require.Contains(t, msgs[0].Text, "pushed one")

	hdr.Set(adaptertest.SignatureHeader, "forged")
	_, err = e.Service.Inbound(ctx, providers.Inbound{HookKey: key, Body: body, Header: hdr, Now: e.Clock.Now()})
	var ie *providers.InboundError
	require.ErrorAs(t, err, &ie)
	require.Equal(t, http.StatusUnauthorized, ie.Status)
}
