package agentpush

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Push request headers. Names are matched case-insensitively.
const (
	HeaderTimestamp = "X-Agentpush-Timestamp"
	HeaderSignature = "X-Agentpush-Signature"
	// headerLegacy is where pre-v2 senders may put sha256=<hex>.
	headerLegacy = "X-Hub-Signature-256"
)

// MaxSkew is how far a push timestamp may be from now, either way.
const MaxSkew = 5 * time.Minute

// verifySignatureV2 reasons.
const (
	reasonMissingTimestamp  = "missing_timestamp"
	reasonInvalidTimestamp  = "invalid_timestamp"
	reasonTimestampSkew     = "timestamp_skew"
	reasonMissingSignature  = "missing_signature"
	reasonInvalidSignature  = "invalid_signature"
	reasonSignatureMismatch = "signature_mismatch"
)

// verifySignatureV2 checks the v2 signature of a push request: the
// timestamp header is 1 to 15 decimal digits of Unix seconds within MaxSkew
// of now, and one comma-separated token of the signature header is
// v2=<64 hex> equal (constant-time) to HMAC-SHA256(secret,
// "<timestamp>.<body>"). It returns "" when valid, else a reason.
func verifySignatureV2(h http.Header, body []byte, secret string, now time.Time) string {
	tsText := strings.TrimSpace(headerValue(h, HeaderTimestamp))
	if tsText == "" {
		return reasonMissingTimestamp
	}
	if len(tsText) > 15 || !allDigits(tsText) {
		return reasonInvalidTimestamp
	}
	ts, err := strconv.ParseInt(tsText, 10, 64)
	if err != nil {
		return reasonInvalidTimestamp
	}
	skew := now.UnixMilli() - ts*1000
	if skew > MaxSkew.Milliseconds() || skew < -MaxSkew.Milliseconds() {
		return reasonTimestampSkew
	}
	sigText := strings.TrimSpace(headerValue(h, HeaderSignature))
	if sigText == "" {
		return reasonMissingSignature
	}
	expected := signV2(secret, tsText, body)
	found := false
	for _, tok := range strings.Split(sigText, ",") {
		hexSig, ok := strings.CutPrefix(strings.TrimSpace(tok), "v2=")
		if !ok || len(hexSig) != sha256.Size*2 {
			continue
		}
		got, err := hex.DecodeString(hexSig)
		if err != nil {
			continue
		}
		found = true
		if hmac.Equal(got, expected) {
			return ""
		}
	}
	if !found {
		return reasonInvalidSignature
	}
	return reasonSignatureMismatch
}

// signV2 is HMAC-SHA256(secret, "<timestamp>.<body>").
func signV2(secret, timestamp string, body []byte) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(timestamp))
	m.Write([]byte{'.'})
	m.Write(body)
	return m.Sum(nil)
}

// legacySignature returns the sha256=<hex> value of a pre-v2 request (in
// the agentpush signature header without any v2 token, or in the GitHub
// style header), or "" when the request carries none.
func legacySignature(h http.Header) string {
	sig := headerValue(h, HeaderSignature)
	hasV2 := false
	legacy := ""
	for _, tok := range strings.Split(sig, ",") {
		tok = strings.TrimSpace(tok)
		switch {
		case strings.HasPrefix(tok, "v2="):
			hasV2 = true
		case strings.HasPrefix(strings.ToLower(tok), "sha256=") && legacy == "":
			legacy = tok
		}
	}
	if hasV2 {
		return ""
	}
	if legacy != "" {
		return legacy
	}
	if strings.TrimSpace(sig) == "" {
		return strings.TrimSpace(headerValue(h, headerLegacy))
	}
	return ""
}

// verifyLegacy checks sha256=<hex> = HMAC-SHA256(secret, body).
func verifyLegacy(value string, body []byte, secret string) bool {
	got, err := hex.DecodeString(strings.TrimSpace(value[len("sha256="):]))
	if err != nil || len(got) != sha256.Size {
		return false
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return hmac.Equal(got, m.Sum(nil))
}

// headerValue returns the first value of name, matching header names
// case-insensitively even when h was built without canonical keys.
func headerValue(h http.Header, name string) string {
	if v := h.Get(name); v != "" {
		return v
	}
	for k, vs := range h {
		if strings.EqualFold(k, name) && len(vs) > 0 {
			return vs[0]
		}
	}
	return ""
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
