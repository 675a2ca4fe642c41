package follow

import (
	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentproto/sentinel/bus"
)

// Bucket holds the follows, keyed by id, and the index entries of their
// keys. It is this package's: it declares BucketConfig, and bus only
// provisions it. The lifecycle stream the engine consumes is
// runtime/sessions'.
const Bucket = "sentinel_follows"

// BucketConfig is the follows bucket's config.
func BucketConfig() jetstream.KeyValueConfig {
	return jetstream.KeyValueConfig{Bucket: Bucket, Description: "session follows", Storage: jetstream.FileStorage}
}

// Assets are the follows bucket, for bus.Open.
func Assets() bus.Assets {
	return bus.Assets{Buckets: []jetstream.KeyValueConfig{BucketConfig()}}
}
