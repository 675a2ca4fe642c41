package sentinels

import (
	"context"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentproto/sentinel/bus"
)

// The buckets of sentinels are this package's: it declares their configs,
// and bus only provisions them. The setup bucket the ledger writes to is
// the bus's (bus.SetupBucket: the bus pins its shared settings there
// first).
const (
	// BucketRecords holds the sentinel records, one key per id.
	BucketRecords = "sentinel_records"
	// BucketSeen holds the seen event ids of each sentinel (seen.go).
	BucketSeen = "sentinel_seen"
	// BucketHooks holds the providers' webhook hook records (secrets).
	BucketHooks = "sentinel_hooks"
	// BucketCreds holds the provider credentials (secrets, creds.go).
	BucketCreds = "sentinel_creds"
	// BucketTombstones holds the provider cancels to retry (tombstones.go).
	BucketTombstones = "sentinel_tombstones"
)

// SeenMarkerTTL is the limit-marker TTL of the seen bucket: it enables
// per-key TTLs there (each evicted seen id expires by itself) and bounds
// how long the marker an expired or purged key leaves behind lives.
const SeenMarkerTTL = time.Minute

// RecordsBucket is the records bucket's config.
func RecordsBucket() jetstream.KeyValueConfig {
	return jetstream.KeyValueConfig{Bucket: BucketRecords, Description: "sentinel records", Storage: jetstream.FileStorage}
}

// SeenBucket is the seen bucket's config.
func SeenBucket() jetstream.KeyValueConfig {
	return jetstream.KeyValueConfig{Bucket: BucketSeen, Description: "seen event ids per sentinel", LimitMarkerTTL: SeenMarkerTTL, Storage: jetstream.FileStorage}
}

// HooksBucket is the hooks bucket's config.
func HooksBucket() jetstream.KeyValueConfig {
	return jetstream.KeyValueConfig{Bucket: BucketHooks, Description: "webhook hook records (hold secrets)", Storage: jetstream.FileStorage}
}

// CredsBucket is the credentials bucket's config.
func CredsBucket() jetstream.KeyValueConfig {
	return jetstream.KeyValueConfig{Bucket: BucketCreds, Description: "provider credentials (hold secrets)", Storage: jetstream.FileStorage}
}

// TombstonesBucket is the tombstones bucket's config.
func TombstonesBucket() jetstream.KeyValueConfig {
	return jetstream.KeyValueConfig{Bucket: BucketTombstones, Description: "provider cancels to retry", Storage: jetstream.FileStorage}
}

// Assets are the buckets this package owns, for bus.Open.
func Assets() bus.Assets {
	return bus.Assets{Buckets: []jetstream.KeyValueConfig{RecordsBucket(), SeenBucket(), HooksBucket(), CredsBucket(), TombstonesBucket(), WatchIndexConfig()}}
}

// Buckets are the provisioned buckets of sentinels.
type Buckets struct {
	Records    jetstream.KeyValue
	Seen       jetstream.KeyValue
	Hooks      jetstream.KeyValue
	Creds      jetstream.KeyValue
	Tombstones jetstream.KeyValue
	// Setup is the bus's setup bucket, where the ledger lives.
	Setup jetstream.KeyValue
}

// OpenBuckets provisions the buckets (idempotent; answered without a
// request for those bus.Open provisioned) and returns them.
func OpenBuckets(ctx context.Context, p bus.Provisioner) (*Buckets, error) {
	var bk Buckets
	for _, b := range []struct {
		cfg jetstream.KeyValueConfig
		dst *jetstream.KeyValue
	}{
		{RecordsBucket(), &bk.Records}, {SeenBucket(), &bk.Seen}, {HooksBucket(), &bk.Hooks},
		{CredsBucket(), &bk.Creds}, {TombstonesBucket(), &bk.Tombstones}, {bus.SetupBucket(), &bk.Setup},
	} {
		kv, err := p.EnsureKeyValue(ctx, b.cfg)
		if err != nil {
			return nil, err
		}
		*b.dst = kv
	}
	return &bk, nil
}
