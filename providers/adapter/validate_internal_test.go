package adapter

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/adapter/kit"
)

// TestReasonsMatchTheProviderClasses: every wire reason of the kit maps
// onto the provider error class of the same label.
func TestReasonsMatchTheProviderClasses(t *testing.T) {
	for want, wire := range map[providers.Reason]string{
		providers.ReasonSetup: kit.ReasonSetup, providers.ReasonAuth: kit.ReasonAuth, providers.ReasonForbidden: kit.ReasonForbidden,
		providers.ReasonNotFound: kit.ReasonNotFound, providers.ReasonRateLimited: kit.ReasonRateLimited, providers.ReasonServer: kit.ReasonServer,
		providers.ReasonNetwork: kit.ReasonNetwork, providers.ReasonInvalid: kit.ReasonInvalid,
	} {
		require.Equal(t, want, reasonOf(wire), wire)
	}
	require.Equal(t, providers.ReasonUnknown, reasonOf("nonsense"))
}

// TestRedact: known secrets, token shapes and URL secrets never pass.
func TestRedact(t *testing.T) {
	r := &redactor{}
	r.learn("hunter2-secret", "abc")
	cases := map[string]string{
		"token hunter2-secret leaked":                "token [redacted] leaked",
		"short abc stays":                            "short abc stays",
		"gl glpat-ABCDEFGHIJKLMNOPQRSTUV here":       "gl [redacted] here",
		"Authorization: Bearer abcdefghijklmnop123":  "Authorization: [redacted]",
		"see https://user:pw@gitlab.example/x?tok=1": "see https://[redacted]@gitlab.example/x?[redacted]",
	}
	for in, want := range cases {
		require.Equal(t, want, r.redact(in), in)
	}
}
