package sentinels_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/runtime/runtimetest"
)

// hostedFields are the setup fields of an agentpush-like provider: a
// secret bound to the endpoint it is sent to.
var hostedFields = []providers.SetupField{
	{Name: "apiKey", Required: true, Sensitive: true},
	{Name: "baseUrl", Endpoint: true},
	{Name: "delivery"},
}

func TestSetupBindsSecretsToTheEndpoint(t *testing.T) {
	const key = "sk_live_SECRET"
	tests := []struct {
		name   string
		stored map[string]string // the setup before (nil: none)
		fields map[string]string
		code   string // "" when accepted
		want   map[string]string
	}{
		{name: "first setup with the default endpoint", fields: map[string]string{"apiKey": key},
			want: map[string]string{"apiKey": key}},
		{name: "key rotation on the default endpoint", stored: map[string]string{"apiKey": key}, fields: map[string]string{"apiKey": "k2"},
			want: map[string]string{"apiKey": "k2"}},
		{name: "a new endpoint with its key", stored: map[string]string{"apiKey": key}, fields: map[string]string{"apiKey": "k2", "baseUrl": "https://b.example"},
			want: map[string]string{"apiKey": "k2", "baseUrl": "https://b.example"}},
		{name: "a new endpoint without the key", stored: map[string]string{"apiKey": key, "baseUrl": "https://a.example"},
			fields: map[string]string{"baseUrl": "https://b.example"}, code: sentinel.CodeSetupCredentialsRequired},
		{name: "setting an endpoint over the default without the key", stored: map[string]string{"apiKey": key},
			fields: map[string]string{"baseUrl": "https://b.example"}, code: sentinel.CodeSetupCredentialsRequired},
		{name: "clearing the endpoint without the key", stored: map[string]string{"apiKey": key, "baseUrl": "https://a.example"},
			fields: map[string]string{"baseUrl": ""}, code: sentinel.CodeSetupCredentialsRequired},
		{name: "a new key under a stored endpoint", stored: map[string]string{"apiKey": key, "baseUrl": "https://a.example"},
			fields: map[string]string{"apiKey": "k2"}, code: sentinel.CodeSetupEndpointRequired},
		{name: "a new key with the endpoint restated", stored: map[string]string{"apiKey": key, "baseUrl": "https://a.example"},
			fields: map[string]string{"apiKey": "k2", "baseUrl": "https://a.example/"}, want: map[string]string{"apiKey": "k2", "baseUrl": "https://a.example/"}},
		{name: "the same endpoint again", stored: map[string]string{"apiKey": key, "baseUrl": "https://a.example"},
			fields: map[string]string{"baseUrl": " https://a.example/ "}, want: map[string]string{"apiKey": key, "baseUrl": " https://a.example/ "}},
		{name: "another field alone", stored: map[string]string{"apiKey": key, "baseUrl": "https://a.example"},
			fields: map[string]string{"delivery": "push"}, want: map[string]string{"apiKey": key, "baseUrl": "https://a.example", "delivery": "push"}},
		{name: "plain http off loopback", fields: map[string]string{"apiKey": key, "baseUrl": "http://a.example"}, code: sentinel.CodeInsecureURL},
		{name: "an endpoint with credentials", fields: map[string]string{"apiKey": key, "baseUrl": "https://u:p@a.example"}, code: sentinel.CodeInsecureURL},
		{name: "a relative endpoint", fields: map[string]string{"apiKey": key, "baseUrl": "a.example"}, code: sentinel.CodeInsecureURL},
		{name: "http to loopback", fields: map[string]string{"apiKey": key, "baseUrl": "http://127.0.0.1:9"},
			want: map[string]string{"apiKey": key, "baseUrl": "http://127.0.0.1:9"}},
		{name: "http to localhost", fields: map[string]string{"apiKey": key, "baseUrl": "http://localhost:9"},
			want: map[string]string{"apiKey": key, "baseUrl": "http://localhost:9"}},
		{name: "http to ipv6 loopback", fields: map[string]string{"apiKey": key, "baseUrl": "http://[::1]:9"},
			want: map[string]string{"apiKey": key, "baseUrl": "http://[::1]:9"}},
	}
	p := newShaped("hosted")
	p.fields = hostedFields
	e := runtimetest.Start(t, runtimetest.Options{NoWorkers: true, Extra: []providers.Provider{p}})
	ctx := context.Background()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.NoError(t, e.Creds.Merge(ctx, "hosted", map[string]string{"apiKey": "", "baseUrl": "", "delivery": ""}))
			if tc.stored != nil {
				require.NoError(t, e.Creds.Merge(ctx, "hosted", tc.stored))
			}
			before, err := e.Creds.Credentials(ctx, "hosted")
			require.NoError(t, err)
			_, err = e.Service.Setup(ctx, "hosted", tc.fields)
			got, rerr := e.Creds.Credentials(ctx, "hosted")
			require.NoError(t, rerr)
			if tc.code != "" {
				require.Equal(t, tc.code, codeOf(t, err))
				require.NotContains(t, err.Error(), key, "the refusal never echoes the secret")
				require.Equal(t, before, got, "a refused setup stores nothing")
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

// TestSetupRacesKeepTheBinding races a key rotation (no endpoint: allowed
// while none is stored) against a setup that moves the endpoint with its
// own key: whatever the interleaving, the rotated key never ends up stored
// with the moved endpoint, because the check and the write are one
// compare-and-set.
func TestSetupRacesKeepTheBinding(t *testing.T) {
	p := newShaped("hosted")
	p.fields = hostedFields
	e := runtimetest.Start(t, runtimetest.Options{NoWorkers: true, Extra: []providers.Provider{p}})
	ctx := context.Background()
	for round := range 40 {
		require.NoError(t, e.Creds.Merge(ctx, "hosted", map[string]string{"apiKey": "key-0", "baseUrl": ""}))
		var wg sync.WaitGroup
		var rotErr, moveErr error
		wg.Go(func() { _, rotErr = e.Service.Setup(ctx, "hosted", map[string]string{"apiKey": "key-rotated"}) })
		wg.Go(func() {
			_, moveErr = e.Service.Setup(ctx, "hosted", map[string]string{"apiKey": "key-b", "baseUrl": "https://b.example"})
		})
		wg.Wait()
		require.NoError(t, moveErr, "round %d", round)
		if rotErr != nil {
			require.Equal(t, sentinel.CodeSetupEndpointRequired, codeOf(t, rotErr), "round %d", round)
		}
		got, err := e.Creds.Credentials(ctx, "hosted")
		require.NoError(t, err)
		if got["baseUrl"] == "https://b.example" {
			require.Equal(t, "key-b", got["apiKey"], "round %d: a key given for the default endpoint was stored with the moved one", round)
		}
	}
}
