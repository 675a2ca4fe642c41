package agentpush_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/agentpush"
	"github.com/agentproto/sentinel/providers/agentpush/agentpushtest"
)

func TestPreferredDelivery(t *testing.T) {
	cases := []struct {
		name     string
		delivery string
		url      string
		want     providers.Delivery
	}{
		{name: "default is poll", url: "https://sentinel.example", want: providers.Delivery{Mode: "poll", IntervalMs: 15000}},
		{name: "push with https", delivery: " Push ", url: "https://sentinel.example/", want: providers.Delivery{Mode: "push", CallbackURL: "https://sentinel.example"}},
		{name: "push without https falls back", delivery: "push", url: "http://sentinel.example", want: providers.Delivery{Mode: "poll", IntervalMs: 15000}},
		{name: "push without url falls back", delivery: "push", want: providers.Delivery{Mode: "poll", IntervalMs: 15000}},
		{name: "explicit poll", delivery: "poll", url: "https://sentinel.example", want: providers.Delivery{Mode: "poll", IntervalMs: 15000}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, map[string]string{"delivery": tc.delivery})
			f.url = providers.PublicURL{URL: tc.url, Stable: true}
			require.Equal(t, tc.want, f.p.PreferredDelivery(context.Background(), 15000))
			require.Equal(t, tc.want, providers.PreferredDelivery(context.Background(), f.p, 15000, tc.url))
		})
	}
}

func TestCreatePush(t *testing.T) {
	f := newFixture(t, map[string]string{"delivery": "push"})
	h, err := f.p.Create(context.Background(), providers.CreateRequest{
		SentinelID: "sen_01",
		Spec:       spec(sentinel.Clause{Subject: "github:acme/api#7"}),
		Delivery:   providers.Delivery{Mode: providers.ModePush, CallbackURL: "https://sentinel.example/"},
	})
	require.NoError(t, err)
	hookKey := h.StateString("hookKey")
	secret := h.StateString("callbackSecret")
	require.Regexp(t, `^[0-9a-f]{32}$`, hookKey)
	require.Regexp(t, `^[0-9a-f]{64}$`, secret)
	require.Equal(t, "push", h.StateString("mode"))
	require.Equal(t, "v2", h.StateString("signature"))
	require.Equal(t, hookKey, providers.HookKeyOf(h))

	sub, ok := f.srv.Subscription(h.RemoteID)
	require.True(t, ok)
	require.Equal(t, "push", sub.Mode)
	require.Equal(t, "https://sentinel.example/inbound/sentinel-"+hookKey, sub.CallbackURL)
	require.Equal(t, secret, sub.CallbackSecret)
}

func TestCreatePushFallsBackToPoll(t *testing.T) {
	cases := []struct {
		name string
		d    providers.Delivery
	}{
		{name: "no origin", d: providers.Delivery{Mode: providers.ModePush}},
		{name: "http origin", d: providers.Delivery{Mode: providers.ModePush, CallbackURL: "http://sentinel.example"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, map[string]string{"delivery": "push"})
			h, err := f.p.Create(context.Background(), providers.CreateRequest{SentinelID: "sen_1", Spec: spec(sentinel.Clause{Subject: "github:acme/api"}), Delivery: tc.d})
			require.NoError(t, err)
			require.Equal(t, "poll", h.StateString("mode"))
			require.Empty(t, h.StateString("hookKey"))
			require.Empty(t, h.StateString("callbackSecret"))
			sub, _ := f.srv.Subscription(h.RemoteID)
			require.Equal(t, "poll", sub.Mode)
			require.Empty(t, sub.CallbackURL)
		})
	}
}

func TestAttachRepointsChangedCallbackOnce(t *testing.T) {
	f := newFixture(t, map[string]string{"delivery": "push"})
	ctx := context.Background()
	h, err := f.p.Create(ctx, providers.CreateRequest{SentinelID: "sen_1", Spec: spec(sentinel.Clause{Subject: "github:acme/api"}),
		Delivery: providers.Delivery{Mode: providers.ModePush, CallbackURL: "https://old.example"}})
	require.NoError(t, err)
	moved := providers.Delivery{Mode: providers.ModePush, CallbackURL: "https://new.example"}

	for range 2 {
		got, err := f.p.Attach(ctx, h, moved)
		require.NoError(t, err)
		require.Equal(t, h, got)
	}
	patches := f.srv.RequestsTo(http.MethodPatch, "/subscriptions/"+h.RemoteID)
	require.Len(t, patches, 1)
	want := "https://new.example/inbound/sentinel-" + h.StateString("hookKey")
	require.JSONEq(t, `{"callback_url":"`+want+`"}`, string(patches[0].Body))
	sub, _ := f.srv.Subscription(h.RemoteID)
	require.Equal(t, want, sub.CallbackURL)

	// A poll delivery never switches the mode, and without any https origin
	// nothing is re-pointed.
	_, err = f.p.Attach(ctx, h, providers.Delivery{Mode: providers.ModePoll})
	require.NoError(t, err)
	require.Len(t, f.srv.RequestsTo(http.MethodPatch, "/subscriptions/"+h.RemoteID), 1)
	sub, _ = f.srv.Subscription(h.RemoteID)
	require.Equal(t, "push", sub.Mode)
}

// TestPushEndToEnd delivers queued envelopes from the fake server over
// https to an inbound route that verifies them with the provider.
func TestPushEndToEnd(t *testing.T) {
	var (
		mu   sync.Mutex
		got  []sentinel.Event
		h    sentinel.Handle
		prov *agentpush.Provider
	)
	inbound := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		key, _ := strings.CutPrefix(r.URL.Path, "/inbound/sentinel-")
		if key != providers.HookKeyOf(h) {
			http.NotFound(w, r)
			return
		}
		evs, err := prov.ParseInbound(r.Context(), providers.Inbound{HookKey: key, Body: body, Header: r.Header}, h)
		var ie *providers.InboundError
		switch {
		case errors.As(err, &ie):
			http.Error(w, ie.Code, ie.Status)
		case err != nil:
			http.Error(w, "internal", http.StatusInternalServerError)
		default:
			got = append(got, evs...)
		}
	}))
	t.Cleanup(inbound.Close)

	f := newFixtureWith(t, map[string]string{"delivery": "push"}, agentpushtest.Config{PushClient: inbound.Client()})
	f.url = providers.PublicURL{URL: inbound.URL, Stable: true}
	d := f.p.PreferredDelivery(context.Background(), 15000)
	require.Equal(t, providers.ModePush, d.Mode)

	mu.Lock()
	prov = f.p
	var err error
	h, err = f.p.Create(context.Background(), providers.CreateRequest{SentinelID: "sen_1", Spec: spec(sentinel.Clause{Subject: "github:acme/api#7"}), Delivery: d})
	mu.Unlock()
	require.NoError(t, err)

	require.Equal(t, []string{h.RemoteID}, f.srv.Publish(event("ev-1")))
	f.srv.Publish(event("ev-2"))
	res, err := f.srv.Deliver(context.Background(), h.RemoteID)
	require.NoError(t, err)
	require.Equal(t, 2, res.Delivered)
	mu.Lock()
	require.Equal(t, []string{"ev-1", "ev-2"}, eventIDs(got))
	mu.Unlock()
	require.Empty(t, f.srv.Pending(h.RemoteID))

	// A stale clock on the sender is refused with 401 and the row stays
	// queued for a retry.
	f.srvNow = epoch.Add(-301 * time.Second)
	f.srv.Publish(event("ev-3"))
	res, err = f.srv.Deliver(context.Background(), h.RemoteID)
	require.Error(t, err)
	require.Equal(t, []int{http.StatusUnauthorized}, res.Statuses)
	require.Len(t, f.srv.Pending(h.RemoteID), 1)
}
