package quota

import (
	"encoding/base64"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Bucket is the KV bucket of the shared quota view.
const Bucket = "sentinel_github_quota"

// bucketTTL drops the budget of a credential not seen for a day.
const bucketTTL = 24 * time.Hour

// BucketConfig is the bucket's config, provisioned through
// bus.EnsureKeyValue.
func BucketConfig() jetstream.KeyValueConfig {
	return jetstream.KeyValueConfig{Bucket: Bucket, Description: "GitHub rate-limit budgets per credential and resource (no secrets)", History: 1, TTL: bucketTTL}
}

// key is the bucket key of a credential's resource: both parts encoded so
// any id is a valid key.
func key(credential, resource string) string {
	enc := base64.RawURLEncoding
	return enc.EncodeToString([]byte(credential)) + "." + enc.EncodeToString([]byte(strings.ToLower(resource)))
}
