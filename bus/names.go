package bus

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"time"
)

// Stream names.
const (
	// StreamEvents keeps the events with limits retention, trimmed below
	// what every partition acknowledged (events.go).
	StreamEvents    = "SENTINEL_EVENTS_V2"
	StreamInbox     = "SENTINEL_INBOX"
	StreamParked    = "SENTINEL_PARKED"
	StreamLifecycle = "SENTINEL_LIFECYCLE"
)

// KV bucket names.
const (
	BucketSentinels = "sentinel_records"
	BucketSeen      = "sentinel_seen"
	BucketHooks     = "sentinel_hooks"
	BucketCreds     = "sentinel_creds"
	BucketSetup     = "sentinel_setup"
	BucketSessions  = "sentinel_sessions"
	BucketFollows   = "sentinel_follows"
	BucketLocks     = "sentinel_locks"
	BucketCursors   = "sentinel_cursors"
	BucketTombstone = "sentinel_tombstones"
	BucketNodes     = "sentinel_nodes"
	BucketLeases    = "sentinel_leases"
)

// SeenMarkerTTL is the limit-marker TTL of the seen bucket: it enables
// per-key TTLs there (each evicted seen id expires by itself) and bounds
// how long the marker an expired or purged key leaves behind lives.
const SeenMarkerTTL = time.Minute

const (
	eventsPrefix    = "sentinel.events.v2."
	inboxPrefix     = "sentinel.inbox."
	parkedPrefix    = "sentinel.parked."
	lifecyclePrefix = "sentinel.lifecycle."
)

// Partition returns the event partition of a sentinel id (FNV-1a mod n).
func Partition(sentinelID string, n int) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(sentinelID))
	return int(h.Sum32() % uint32(n))
}

// EventSubject is the subject of a sentinel's events in its partition.
func EventSubject(partition int, sentinelID string) string {
	return eventsPrefix + strconv.Itoa(partition) + "." + sentinelID
}

// PartitionFilter is the filter subject of one partition's consumer.
func PartitionFilter(partition int) string {
	return eventsPrefix + strconv.Itoa(partition) + ".*"
}

// ConsumerName is the durable consumer name of one partition.
func ConsumerName(partition int) string { return fmt.Sprintf("deliver-%d", partition) }

// EventMsgID is the Nats-Msg-Id of an event published for a sentinel.
func EventMsgID(sentinelID, eventID string) string { return sentinelID + ":" + eventID }

// InboxSubject is the subject of one inbox message. One subject per message
// lets the stream refuse a second copy forever (expected last subject
// sequence 0), not only inside the duplicates window.
func InboxSubject(sessionID, msgID string) string {
	return inboxPrefix + sessionID + "." + msgID
}

// InboxFilter matches every message of a session's inbox.
func InboxFilter(sessionID string) string { return inboxPrefix + sessionID + ".*" }

// InboxAll matches every inbox message.
const InboxAll = inboxPrefix + "*.*"

// ParkedSubject is the parked-record subject of a sentinel or follow id.
func ParkedSubject(id string) string { return parkedPrefix + id }

// ParkedAll matches every parked record.
const ParkedAll = parkedPrefix + "*"

// LifecycleSubject is the lifecycle-event subject of a session.
func LifecycleSubject(sessionID string) string { return lifecyclePrefix + sessionID }

// LifecycleAll matches every lifecycle event.
const LifecycleAll = lifecyclePrefix + "*"
