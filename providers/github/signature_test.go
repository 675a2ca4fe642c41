package github

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestWebhookSignature(t *testing.T) {
	const secret = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	body := []byte(`{"zen":"Keep it logically awesome."}`)
	good := SignWebhook(secret, body)
	require.Len(t, good, len("sha256=")+64)
	tests := []struct {
		name, secret, header string
		body                 []byte
		want                 string
	}{
		{"valid", secret, good, body, ""},
		{"upper-case hex", secret, "sha256=" + strings.ToUpper(strings.TrimPrefix(good, "sha256=")), body, ""},
		{"missing", secret, "", body, ReasonMissingSignature},
		{"tampered body", secret, good, append([]byte(" "), body...), ReasonBadSignature},
		{"other secret", strings.Repeat("f", 64), good, body, ReasonBadSignature},
		{"empty secret", "", SignWebhook("", body), body, ReasonBadSignature},
		{"bare hex", secret, "deadbeef", body, ReasonBadSignature},
		{"bare full hex", secret, strings.TrimPrefix(good, "sha256="), body, ReasonBadSignature},
		{"empty digest", secret, "sha256=", body, ReasonBadSignature},
		{"non hex", secret, "sha256=zz", body, ReasonBadSignature},
		{"non hex full length", secret, "sha256=" + strings.Repeat("z", 64), body, ReasonBadSignature},
		{"sha1", secret, "sha1=" + strings.Repeat("a", 40), body, ReasonBadSignature},
		{"short hex", secret, good[:len(good)-2], body, ReasonBadSignature},
		{"long hex", secret, good + "00", body, ReasonBadSignature},
		{"space padded", secret, " " + good, body, ReasonBadSignature},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, VerifyWebhookSignature(tt.secret, tt.body, tt.header))
		})
	}
}
