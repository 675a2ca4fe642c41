package cluster

import (
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// The cluster's buckets are this package's: it declares their configs,
// and the composition root has bus provision them.
const (
	// BucketNodes holds one heartbeat key per live node.
	BucketNodes = "sentinel_nodes"
	// BucketLeases holds the work ownership leases.
	BucketLeases = "sentinel_leases"
)

// NodesBucket is the nodes bucket's config: a key ages out memberTTL
// (bus.member_ttl) after its node's last beat.
func NodesBucket(memberTTL time.Duration) jetstream.KeyValueConfig {
	return jetstream.KeyValueConfig{Bucket: BucketNodes, Description: "live nodes (heartbeats; a key ages out MemberTTL after its node's last beat)",
		TTL: memberTTL, Storage: jetstream.FileStorage}
}

// LeasesBucket is the leases bucket's config: a lease ages out leaseTTL
// (bus.lease_ttl) after its last renewal.
func LeasesBucket(leaseTTL time.Duration) jetstream.KeyValueConfig {
	return jetstream.KeyValueConfig{Bucket: BucketLeases, Description: "work ownership leases (a lease ages out LeaseTTL after its last renewal)",
		TTL: leaseTTL, Storage: jetstream.FileStorage}
}

// Buckets are the nodes and leases buckets' configs.
func Buckets(memberTTL, leaseTTL time.Duration) []jetstream.KeyValueConfig {
	return []jetstream.KeyValueConfig{NodesBucket(memberTTL), LeasesBucket(leaseTTL)}
}
