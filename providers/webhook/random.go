package webhook

import (
	"crypto/rand"
	"encoding/hex"
)

// randomHex returns n random bytes as lower-case hex.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go >= 1.24)
	return hex.EncodeToString(b)
}

// newRouteKey returns a route key: 32 hex (16 random bytes).
func newRouteKey() string { return randomHex(16) }

// newSecret returns an HMAC secret: 64 hex (32 random bytes).
func newSecret() string { return randomHex(32) }

// newHolder returns a holder id: wh_<16 hex>.
func newHolder() string { return "wh_" + randomHex(8) }
