package agentpush_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/providers"
)

func TestAttach(t *testing.T) {
	cases := []struct {
		name    string
		setup   func(f *fixture)
		wantErr string
	}{
		{name: "live subscription"},
		{name: "deleted subscription", setup: func(f *fixture) { f.srv.Delete("sub_1") }, wantErr: "agentpush subscription sub_1 no longer exists — re-create the sentinel"},
		{name: "server error tolerated", setup: func(f *fixture) { f.srv.FailNext(http.StatusBadGateway, 1) }},
		{name: "auth error tolerated", setup: func(f *fixture) { f.srv.FailAuth(http.StatusUnauthorized) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, nil)
			h := f.create(t, "github:acme/api")
			if tc.setup != nil {
				tc.setup(f)
			}
			got, err := f.p.Attach(context.Background(), h, providers.Delivery{Mode: providers.ModePoll, IntervalMs: 15000})
			if tc.wantErr != "" {
				require.EqualError(t, err, tc.wantErr)
				require.Equal(t, providers.ReasonNotFound, providers.ReasonOf(err))
				return
			}
			require.NoError(t, err)
			require.Equal(t, h, got)
			require.Empty(t, f.srv.RequestsTo(http.MethodPatch, "/subscriptions/sub_1"))
		})
	}
}

func TestCancelIsIdempotent(t *testing.T) {
	f := newFixture(t, nil)
	h := f.create(t, "github:acme/api")
	require.NoError(t, f.p.Cancel(context.Background(), h))
	_, ok := f.srv.Subscription(h.RemoteID)
	require.False(t, ok)
	require.NoError(t, f.p.Cancel(context.Background(), h))
	require.Len(t, f.srv.RequestsTo(http.MethodDelete, "/subscriptions/sub_1"), 2)

	f.srv.FailNext(http.StatusInternalServerError, 1)
	require.Equal(t, providers.ReasonServer, providers.ReasonOf(f.p.Cancel(context.Background(), h)))
}

func TestStatusReflectsSubscription(t *testing.T) {
	f := newFixture(t, nil)
	h := f.create(t, "github:acme/api")
	hl, err := f.p.Status(context.Background(), h)
	require.NoError(t, err)
	require.True(t, hl.OK)
	require.Equal(t, "poll", hl.Extra["mode"])

	f.srv.SetStatus(h.RemoteID, "paused")
	hl, err = f.p.Status(context.Background(), h)
	require.NoError(t, err)
	require.False(t, hl.OK)
	require.Equal(t, "the agentpush subscription is paused", hl.Detail)
}

func TestReadinessAndSetupFields(t *testing.T) {
	f := newFixture(t, nil)
	require.Equal(t, providers.Readiness{Ready: true}, f.p.Readiness(context.Background()))

	f.creds.fields = map[string]string{}
	r := f.p.Readiness(context.Background())
	require.False(t, r.Ready)
	require.Contains(t, r.Reason, "run setup_sentinel_provider (provider agentpush, field apiKey)")
	require.Empty(t, f.srv.Requests(), "readiness is offline")

	fields := f.p.SetupFields()
	require.Len(t, fields, 3)
	require.Equal(t, "apiKey", fields[0].Name)
	require.True(t, fields[0].Required)
	require.True(t, fields[0].Sensitive)
	require.Contains(t, fields[0].Description, "never returned")
	require.Equal(t, "baseUrl", fields[1].Name)
	require.False(t, fields[1].Sensitive)
	require.Equal(t, "delivery", fields[2].Name)

	caps := f.p.Capabilities()
	require.Equal(t, providers.Capabilities{Subjects: []string{"*"}, Push: true, Poll: true, Durable: true, RequiresAuth: true, TypicalLatencyMs: 15000}, caps)
	require.Equal(t, []string{"*"}, f.p.DefaultTypes("linear:ENG-1"))
	require.Len(t, f.p.DefaultTypes("github:acme"), 6)
}
