package adapter_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus/bustest"
	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/adapter"
	"github.com/agentproto/sentinel/providers/adapter/adaptertest"
)

func feedSpec(subjects ...string) sentinel.Spec {
	var cl []sentinel.Clause
	for _, s := range subjects {
		cl = append(cl, sentinel.Clause{Subject: s})
	}
	return sentinel.Spec{Match: cl, Until: sentinel.Until{Kind: sentinel.UntilNever}, Target: sentinel.Target{Kind: sentinel.TargetSession, SessionID: "s1"}}
}

func TestFeedAdapterLifecycle(t *testing.T) {
	f := newFeed(t, "feed", "", nil, "")
	ctx := context.Background()

	require.Equal(t, "feed", f.P.Info().Slug)
	caps := f.P.Capabilities() // the first use: starts and describes
	require.True(t, caps.Poll)
	require.Equal(t, []string{"feed"}, caps.Subjects)
	require.Equal(t, "Feed (feed)", f.P.Info().Name)
	require.Equal(t, "1.0.0", f.P.Info().Version)
	require.Equal(t, []string{"feed.*"}, f.P.DefaultTypes("feed:a"))
	require.Len(t, f.P.SetupFields(), 2)
	require.Empty(t, f.P.Unavailable(ctx))
	r := f.P.Readiness(ctx)
	require.True(t, r.Ready, r.Reason)

	h, err := f.P.Create(ctx, providers.CreateRequest{SentinelID: "sen_1", Spec: feedSpec("feed:a"), Delivery: providers.Delivery{Mode: providers.ModePoll}})
	require.NoError(t, err)
	require.Equal(t, "feed", h.Provider)
	require.Equal(t, "feed-sen_1", h.RemoteID)
	require.Equal(t, "0", h.Cursor)

	adaptertest.WriteFeed(t, f.Feed,
		adaptertest.Line{Subject: "feed:a", Type: "feed.x", ID: "e1", Summary: "first\nline\x1b[31m"},
		adaptertest.Line{Subject: "feed:a", Type: "feed.y", ID: "e2", Terminal: true})
	res, err := f.P.Poll(ctx, h, 50)
	require.NoError(t, err)
	require.Len(t, res.Events, 2)
	require.Equal(t, "2", res.Cursor)
	require.Equal(t, "first line [31m", res.Events[0].Summary, "untrusted text is one line without control characters")
	for _, ev := range res.Events {
		require.NoError(t, ev.Validate())
	}
	again, err := f.P.Poll(ctx, h, 50)
	require.NoError(t, err)
	require.Equal(t, res.Events[0].ID, again.Events[0].ID)

	hs, err := f.P.Status(ctx, h)
	require.NoError(t, err)
	require.True(t, hs.OK)
	require.NoError(t, f.P.Cancel(ctx, h))

	// The adapter wrote its token to stderr: the log has it redacted.
	bustest.Eventually(t, 10*time.Second, func() bool { return strings.Contains(f.Log.String(), "polling with token [redacted]") },
		"the adapter's stderr in the log")
	require.Equal(t, 1, f.P.Process().State().Starts, "one process served every call")
}

func TestFeedAdapterNeverSeesNodeSecrets(t *testing.T) {
	f := newFeed(t, "feed", "", nil, "")
	ctx := context.Background()
	// The adapter reports the names of its variables: the pass list and
	// FEED_* only, never the node's AGENTPROTO_TOKEN.
	h, err := f.P.Create(ctx, providers.CreateRequest{SentinelID: "sen_1", Spec: feedSpec("feed:a"), Delivery: providers.Delivery{Mode: providers.ModePoll}})
	require.NoError(t, err)
	hs, err := f.P.Status(ctx, h)
	require.NoError(t, err)
	require.Equal(t, "env FEED_FEED,FEED_MODE,PATH", hs.Detail)
	require.NotContains(t, f.Log.String(), nodeSecret)
}

func TestFeedAdapterRefusesForeignSubjectsAndBadEvents(t *testing.T) {
	f := newFeed(t, "feed", adaptertest.ModeBadEvents, nil, "")
	ctx := context.Background()
	h, err := f.P.Create(ctx, providers.CreateRequest{SentinelID: "sen_1", Spec: feedSpec("feed:a"), Delivery: providers.Delivery{Mode: providers.ModePoll}})
	require.NoError(t, err)
	adaptertest.WriteFeed(t, f.Feed,
		adaptertest.Line{Subject: "feed:a", Type: "feed.x", ID: "e1"},
		adaptertest.Line{Subject: "feed:other", Type: "feed.x", ID: "e2"})
	res, err := f.P.Poll(ctx, h, 50)
	require.NoError(t, err)
	require.Len(t, res.Events, 1, "only the event of a watched subject passes")
	require.Equal(t, "e1", res.Events[0].ID)
	var reasons []string
	for _, m := range res.Malformed {
		require.NotEmpty(t, m.Digest)
		reasons = append(reasons, m.Error)
	}
	joined := strings.Join(reasons, "|")
	require.Len(t, res.Malformed, 3, joined)
	require.Contains(t, joined, "adapter_event_foreign_subject: feed:other is not a subject this sentinel watches")
	require.Contains(t, joined, "adapter_event_foreign_subject: \"github:o/r#1\" is outside the adapter's declared schemes")
	require.Contains(t, joined, "adapter_event_invalid: the type must be")
}

func TestFeedAdapterSetupIsJudgedByTheAdapter(t *testing.T) {
	f := newFeed(t, "feed", "", nil, "")
	ctx := context.Background()
	require.NoError(t, f.P.CheckSetup(ctx, map[string]string{"token": "fine"}))
	err := f.P.CheckSetup(ctx, map[string]string{"token": "reject-me"})
	require.Error(t, err)
	require.Equal(t, providers.ReasonSetup, providers.ReasonOf(err))
	require.Contains(t, err.Error(), "that token is refused")
	require.NotContains(t, err.Error(), "reject-me", "a sensitive value never comes back in an error")
}

func TestFeedAdapterPush(t *testing.T) {
	f := newFeed(t, "pfeed", adaptertest.ModePush, nil, "https://sentinel.example")
	ctx := context.Background()
	require.True(t, f.P.Capabilities().Push)
	require.False(t, f.P.Capabilities().Poll)
	d := providers.PreferredDelivery(ctx, f.P, 15000, "https://sentinel.example")
	require.Equal(t, providers.ModePush, d.Mode)
	h, err := f.P.Create(ctx, providers.CreateRequest{SentinelID: "sen_1", Spec: feedSpec("feed:a"), Delivery: d})
	require.NoError(t, err)
	key := providers.HookKeyOf(h)
	require.True(t, strings.HasPrefix(key, "pfeed-"), "the node mints the hook key: %q", key)
	adapterState, _ := h.State["adapter"].(map[string]any)
	require.Equal(t, "https://sentinel.example/inbound/sentinel-"+key, adapterState["callback"])

	body := []byte(`[{"subject":"feed:a","type":"feed.pushed","id":"p1","summary":"pushed"}]`)
	hdr := http.Header{}
	hdr.Set(adaptertest.SignatureHeader, adaptertest.Sign(testToken, body))
	evs, err := f.P.ParseInbound(ctx, providers.Inbound{HookKey: key, Body: body, Header: hdr}, h)
	require.NoError(t, err)
	require.Len(t, evs, 1)
	require.Equal(t, "feed.pushed", evs[0].Type)

	hdr.Set(adaptertest.SignatureHeader, "00")
	_, err = f.P.ParseInbound(ctx, providers.Inbound{HookKey: key, Body: body, Header: hdr}, h)
	var ie *providers.InboundError
	require.True(t, errors.As(err, &ie), "%v", err)
	require.Equal(t, 401, ie.Status)
	require.Equal(t, "bad_signature", ie.Code)
}

func TestPushAdapterNeedsAPublicURL(t *testing.T) {
	f := newFeed(t, "pfeed", adaptertest.ModePush, nil, "")
	_, err := f.P.Create(context.Background(), providers.CreateRequest{SentinelID: "sen_1", Spec: feedSpec("feed:a"), Delivery: providers.Delivery{Mode: providers.ModePush}})
	require.Error(t, err)
	require.Equal(t, providers.ReasonSetup, providers.ReasonOf(err))
	require.Contains(t, err.Error(), "public URL")
}

func TestStopEndsTheProcess(t *testing.T) {
	f := newFeed(t, "feed", "", nil, "")
	require.True(t, f.P.Capabilities().Poll)
	require.True(t, f.P.Process().State().Running)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	f.P.Process().Stop(ctx, 5*time.Second)
	require.False(t, f.P.Process().State().Running)
	_, err := f.P.Poll(ctx, sentinel.Handle{Provider: "feed"}, 1)
	require.ErrorIs(t, err, adapter.ErrUnavailable, "a stopped process never starts again")
}
