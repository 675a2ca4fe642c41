package journal

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentproto/sentinel/bus"
)

// StreamName is the decision journal: one entry per pipeline decision
// (this package; bus provisions it from StreamConfig). It is a diagnostic record with bounded retention,
// written asynchronously and never on the delivery path's critical write.
const StreamName = "SENTINEL_JOURNAL"

const subjectPrefix = "sentinel.journal."

// AllSubjects matches every journal entry.
const AllSubjects = subjectPrefix + "*.*"

// DefaultMaxAge is the journal's default retention (7 days).
const DefaultMaxAge = 7 * 24 * time.Hour

// DefaultMaxBytesCap bounds the journal's size by default (256 MiB):
// past it the oldest decisions go first, so a burst cannot fill the
// JetStream storage limit and have the storage guard refuse real writes.
const DefaultMaxBytesCap int64 = 256 << 20

// Token is the subject token of an event id in the journal: the
// first 128 bits of its SHA-256 in hex, so any event id (dots, spaces,
// wildcards) is one safe token.
func Token(eventID string) string {
	sum := sha256.Sum256([]byte(eventID))
	return hex.EncodeToString(sum[:16])
}

// Subject is the subject of a decision about an event for a
// sentinel: sentinel.journal.<sentinelId>.<eventToken>.
func Subject(sentinelID, eventID string) string {
	return subjectPrefix + sentinelID + "." + Token(eventID)
}

// SentinelFilter matches every decision of one sentinel.
func SentinelFilter(sentinelID string) string { return subjectPrefix + sentinelID + ".*" }

// EventFilter matches every decision about one event, whatever
// sentinel made it.
func EventFilter(eventID string) string { return subjectPrefix + "*." + Token(eventID) }

// StreamConfig is the journal stream's configuration. A single replica is
// flushed asynchronously (persist mode async: no fsync per write, whatever
// nats.sync_always says); a replicated one relies on its raft log (the
// server refuses async persist mode on replicated streams).
func StreamConfig(replicas int, maxAge time.Duration, maxBytes int64) jetstream.StreamConfig {
	if replicas <= 0 {
		replicas = 1
	}
	if maxAge <= 0 {
		maxAge = DefaultMaxAge
	}
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytesCap
	}
	cfg := jetstream.StreamConfig{
		Name:        StreamName,
		Description: "decision journal: what the pipeline did with each event (diagnostic, bounded)",
		Subjects:    []string{AllSubjects},
		Storage:     jetstream.FileStorage,
		Retention:   jetstream.LimitsPolicy,
		MaxAge:      maxAge,
		MaxBytes:    maxBytes,
		Replicas:    replicas,
		AllowDirect: true,
		Discard:     jetstream.DiscardOld,
	}
	if replicas == 1 {
		cfg.PersistMode = jetstream.AsyncPersistMode
	}
	return cfg
}

// Stream is the journal stream's spec (replicas: the bus's), for bus.Open.
// OpenStream asks for the same.
func Stream(replicas int, maxAge time.Duration, maxBytes int64) bus.StreamSpec {
	want := StreamConfig(replicas, maxAge, maxBytes)
	return bus.StreamSpec{Config: want, Same: sameStream,
		Recreate: func(have jetstream.StreamConfig) bool { return have.PersistMode != want.PersistMode }}
}

// OpenStream provisions the journal stream (idempotently, writing only
// what differs) with replicas (the bus's replica count) and returns it. The persist
// mode of a stream cannot change in place: when the replica count moved
// across 1 (a single-node home joined to a deployment), the old journal
// is dropped and created anew; it is a diagnostic record, not state.
func OpenStream(ctx context.Context, b bus.Provisioner, replicas int, maxAge time.Duration, maxBytes int64) (jetstream.Stream, error) {
	return b.EnsureStream(ctx, Stream(replicas, maxAge, maxBytes))
}

func sameStream(have, want jetstream.StreamConfig) bool {
	return slices.Equal(have.Subjects, want.Subjects) && have.MaxAge == want.MaxAge && have.MaxBytes == want.MaxBytes && have.Replicas == want.Replicas &&
		have.PersistMode == want.PersistMode && have.AllowDirect == want.AllowDirect && have.Description == want.Description &&
		have.Storage == want.Storage && have.Retention == want.Retention
}
