package providers_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/providers"
)

func TestCheckSecureURL(t *testing.T) {
	for _, tc := range []struct {
		url, err string
	}{
		{url: "https://api.agentpush.io"},
		{url: "https://api.agentpush.io:8443/v1/"},
		{url: "http://127.0.0.1:8080"},
		{url: "http://127.9.9.9"},
		{url: "http://localhost:1"},
		{url: "http://LOCALHOST"},
		{url: "http://[::1]:9"},
		{url: "http://agentpush.example.com", err: "plain http"},
		{url: "http://10.0.0.1", err: "plain http"},
		{url: "http://localhost.evil.example", err: "plain http"},
		{url: "http://127.0.0.1.nip.io", err: "plain http"},
		{url: "ftp://x.example", err: "https"},
		{url: "https://user:pw@x.example", err: "credentials"},
		{url: "x.example/api", err: "absolute"},
		{url: "https://", err: "absolute"},
		{url: "", err: "absolute"},
		{url: "://", err: "parse"},
	} {
		t.Run(tc.url, func(t *testing.T) {
			err := providers.CheckSecureURL(tc.url)
			if tc.err == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tc.err)
			require.NotContains(t, err.Error(), "pw")
		})
	}
}
