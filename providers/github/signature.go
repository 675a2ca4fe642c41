package github

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// WebhookSignatureHeader carries GitHub's HMAC-SHA256 of a delivery's raw
// body: "sha256=<64 lower-case hex>".
const WebhookSignatureHeader = "X-Hub-Signature-256"

// Signature failure reasons.
const (
	ReasonMissingSignature = "missing_signature"
	ReasonBadSignature     = "bad_signature"
)

// SignWebhook returns the X-Hub-Signature-256 value GitHub sends for body
// under secret (the secret's bytes are the HMAC key).
func SignWebhook(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// VerifyWebhookSignature checks header (the X-Hub-Signature-256 value)
// against the HMAC-SHA256 of the raw body under secret, in constant time.
// It returns "" when the signature is valid, else ReasonMissingSignature
// for an absent header or ReasonBadSignature for a mismatch or any
// malformed value ("deadbeef", "sha256=", "sha256=zz", a sha1= value, short
// hex). The result never says what was expected.
func VerifyWebhookSignature(secret string, body []byte, header string) string {
	if header == "" {
		return ReasonMissingSignature
	}
	hexSig, ok := strings.CutPrefix(header, "sha256=")
	if !ok || len(hexSig) != sha256.Size*2 {
		return ReasonBadSignature
	}
	got := make([]byte, sha256.Size)
	if _, err := hex.Decode(got, []byte(hexSig)); err != nil {
		return ReasonBadSignature
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	if secret == "" || !hmac.Equal(got, m.Sum(nil)) {
		return ReasonBadSignature
	}
	return ""
}
