package app_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/providers/agentpush/agentpushtest"
)

// carries reports whether any logged request mentions key (any header or
// the body).
func carries(reqs []agentpushtest.Request, key string) bool {
	for _, r := range reqs {
		for _, vs := range r.Header {
			for _, v := range vs {
				if strings.Contains(v, key) {
					return true
				}
			}
		}
		if strings.Contains(string(r.Body), key) || strings.Contains(r.Query, key) {
			return true
		}
	}
	return false
}

// TestSetupNeverSendsAKeyToANewBaseURL drives POST /adapters/agentpush/setup
// on a real node with two fake agentpush servers: a setup that only moves
// baseUrl to another host is refused (the stored key would follow it), as
// is a plain-http non-loopback baseUrl and a new key under a baseUrl an
// earlier setup chose; after every refusal the old host still gets the
// old key, and once the new host is set up with its own key, no request to
// it ever carries the old one.
func TestSetupNeverSendsAKeyToANewBaseURL(t *testing.T) {
	t.Parallel()
	n := startNode(t)
	const keyA, keyB = "ap_key_for_host_A_0123456789", "ap_key_for_host_B_9876543210"
	a := agentpushtest.Start(t, agentpushtest.Config{APIKey: keyA})
	b := agentpushtest.Start(t, agentpushtest.Config{APIKey: keyB})
	setup := func(status int, fields map[string]string) map[string]any {
		t.Helper()
		return n.expect(status, "POST", "/adapters/agentpush/setup", map[string]any{"fields": fields})
	}
	watch := func() {
		t.Helper()
		n.expect(http.StatusCreated, "POST", "/sentinels", map[string]any{"subject": "jira:PROJ-1", "types": []string{"*"},
			"sessionId": "s1", "provider": "agentpush", "allowDuplicate": true})
	}

	out := setup(http.StatusOK, map[string]string{"apiKey": keyA, "baseUrl": a.URL})
	require.Equal(t, true, out["setup"].(map[string]any)["readiness"].(map[string]any)["ready"])

	// Moving baseUrl alone (as a prompt-injected agent would) is refused.
	out = setup(http.StatusBadRequest, map[string]string{"baseUrl": b.URL})
	require.Equal(t, "setup_credentials_required", out["error"])
	require.NotContains(t, out["message"], keyA)
	out = setup(http.StatusBadRequest, map[string]string{"baseUrl": ""})
	require.Equal(t, "setup_credentials_required", out["error"], "clearing baseUrl moves the key to the default host")
	// Plain http off loopback is refused even with a key.
	out = setup(http.StatusBadRequest, map[string]string{"apiKey": "ap_whatever", "baseUrl": "http://agentpush.example.com"})
	require.Equal(t, "insecure_url", out["error"])
	// A new key alone would go to the stored custom baseUrl: restate it.
	out = setup(http.StatusBadRequest, map[string]string{"apiKey": "ap_rotated"})
	require.Equal(t, "setup_endpoint_required", out["error"])
	// The same baseUrl again (trailing slash aside) is not a change.
	setup(http.StatusOK, map[string]string{"baseUrl": a.URL + "/"})

	watch()
	require.NotEmpty(t, a.RequestsTo("POST", "/subscriptions"), "the refused setups left host A in place")
	require.Empty(t, b.Requests(), "nothing went to host B")

	// Host B with its own key: every request to B carries keyB, never keyA.
	setup(http.StatusOK, map[string]string{"apiKey": keyB, "baseUrl": b.URL})
	watch()
	reqs := b.Requests()
	require.NotEmpty(t, reqs)
	require.False(t, carries(reqs, keyA), "a request to the new host carried the old key")
	for _, r := range reqs {
		require.Equal(t, "Bearer "+keyB, r.Header.Get("Authorization"))
	}
}
