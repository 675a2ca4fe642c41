package agentpush_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/agentpush"
	"github.com/agentproto/sentinel/providers/agentpush/agentpushtest"
)

// toServer is a transport that sends every request, whatever its host, to
// the fake server, so a request meant for another host is still seen.
type toServer struct{ base *url.URL }

func (ts toServer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.URL.Scheme, r.URL.Host = ts.base.Scheme, ts.base.Host
	return http.DefaultTransport.RoundTrip(r)
}

// TestInsecureBaseURLNeverGetsTheKey: a plain-http base URL off loopback,
// stored before setup refused such values or set in the config, makes the
// provider not ready and sends no request at all (the key would travel in
// clear); https and loopback http are used.
func TestInsecureBaseURLNeverGetsTheKey(t *testing.T) {
	srv := agentpushtest.Start(t, agentpushtest.Config{})
	base, err := url.Parse(srv.URL)
	require.NoError(t, err)
	newProvider := func(stored, configured string) *agentpush.Provider {
		return agentpush.New(agentpush.Config{
			Creds:      &creds{fields: map[string]string{agentpush.FieldAPIKey: srv.Key(), agentpush.FieldBaseURL: stored}},
			BaseURL:    configured,
			HTTPClient: &http.Client{Timeout: 5 * time.Second, Transport: toServer{base}},
		})
	}
	req := providers.CreateRequest{SentinelID: "sen_01", Spec: spec(sentinel.Clause{Subject: "jira:PROJ-1"}),
		Delivery: providers.Delivery{Mode: providers.ModePoll, IntervalMs: 15000}}
	for _, tc := range []struct{ name, stored, configured string }{
		{name: "stored plain http", stored: "http://agentpush.example.com"},
		{name: "configured plain http", configured: "http://10.0.0.8:8080"},
		{name: "stored with credentials", stored: "https://user:pw@agentpush.example.com"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv.ResetRequests()
			p := newProvider(tc.stored, tc.configured)
			r := p.Readiness(context.Background())
			require.False(t, r.Ready)
			require.Contains(t, r.Reason, "API key is not sent")
			require.NotContains(t, r.Reason, srv.Key())
			_, err := p.Create(context.Background(), req)
			require.Error(t, err)
			require.Equal(t, providers.ReasonSetup, providers.ReasonOf(err))
			require.NotContains(t, err.Error(), srv.Key())
			require.Empty(t, srv.Requests(), "no request left with the key")
		})
	}
	for _, ok := range []string{"https://agentpush.example.com", srv.URL} {
		srv.ResetRequests()
		p := newProvider(ok, "")
		require.True(t, p.Readiness(context.Background()).Ready, ok)
		_, err := p.Create(context.Background(), req)
		require.NoError(t, err, ok)
		require.Len(t, srv.RequestsTo(http.MethodPost, "/subscriptions"), 1, ok)
	}
}
