package sentinel_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
)

// A session id is substituted for {sessionId} in command hooks' argv, so
// one that a program would read as an option is refused.
func TestSessionIDRefusesALeadingDash(t *testing.T) {
	for _, tc := range []struct {
		name string
		id   string
		ok   bool
	}{
		{name: "plain", id: "run-42", ok: true},
		{name: "leading underscore", id: "_x", ok: true},
		{name: "trailing dash", id: "a-", ok: true},
		{name: "128 characters", id: strings.Repeat("a", 128), ok: true},
		{name: "129 characters", id: strings.Repeat("a", 129)},
		{name: "single dash", id: "-"},
		{name: "short option", id: "-rf"},
		{name: "long option", id: "--output=x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.ok, sentinel.ValidSessionID(tc.id))
			err := sentinel.Target{Kind: sentinel.TargetSession, SessionID: tc.id}.Validate()
			if tc.ok {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, &sentinel.Error{Code: sentinel.CodeInvalidSessionID})
			require.Contains(t, err.Error(), "not starting with '-'")
		})
	}
}
