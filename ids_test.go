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

func TestRedactURL(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{name: "plain", in: "https://hooks.example/wake", want: "https://hooks.example/wake"},
		{name: "query", in: "https://hooks.example/wake?token=s3cret&x=1", want: "https://hooks.example/wake?[redacted]"},
		{name: "userinfo", in: "http://bot:s3cret@127.0.0.1:9000/resume", want: "http://[redacted]@127.0.0.1:9000/resume"},
		{name: "user only", in: "http://s3cret@h/p", want: "http://[redacted]@h/p"},
		{name: "fragment", in: "https://h/p#s3cret", want: "https://h/p#[redacted]"},
		{name: "empty query", in: "https://h/p?", want: "https://h/p?[redacted]"},
		{name: "not a URL", in: "s3cret", want: "[redacted]"},
		{name: "unparsable", in: "http://h/%zz?s3cret", want: "[redacted]"},
		{name: "opaque", in: "mailto:s3cret@example.com", want: "[redacted]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := sentinel.RedactURL(tc.in)
			require.Equal(t, tc.want, got)
			require.NotContains(t, got, "s3cret")
		})
	}
}
