package bus

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// StreamJournal is the decision journal: one entry per pipeline decision
// (runtime/journal). It is a diagnostic record with bounded retention,
// written asynchronously and never on the delivery path's critical write.
const StreamJournal = "SENTINEL_JOURNAL"

const journalPrefix = "sentinel.journal."

// JournalAll matches every journal entry.
const JournalAll = journalPrefix + "*.*"

// DefaultJournalMaxAge is the journal's default retention (7 days).
const DefaultJournalMaxAge = 7 * 24 * time.Hour

// DefaultJournalMaxBytes bounds the journal's size by default (256 MiB):
// past it the oldest decisions go first, so a burst cannot fill the
// JetStream storage limit and have the storage guard refuse real writes.
const DefaultJournalMaxBytes int64 = 256 << 20

// JournalToken is the subject token of an event id in the journal: the
// first 128 bits of its SHA-256 in hex, so any event id (dots, spaces,
// wildcards) is one safe token.
func JournalToken(eventID string) string {
	sum := sha256.Sum256([]byte(eventID))
	return hex.EncodeToString(sum[:16])
}

// JournalSubject is the subject of a decision about an event for a
// sentinel: sentinel.journal.<sentinelId>.<eventToken>.
func JournalSubject(sentinelID, eventID string) string {
	return journalPrefix + sentinelID + "." + JournalToken(eventID)
}

// JournalSentinelFilter matches every decision of one sentinel.
func JournalSentinelFilter(sentinelID string) string { return journalPrefix + sentinelID + ".*" }

// JournalEventFilter matches every decision about one event, whatever
// sentinel made it.
func JournalEventFilter(eventID string) string { return journalPrefix + "*." + JournalToken(eventID) }

// JournalConfig is the journal stream's configuration. A single replica is
// flushed asynchronously (persist mode async: no fsync per write, whatever
// nats.sync_always says); a replicated one relies on its raft log (the
// server refuses async persist mode on replicated streams).
func JournalConfig(replicas int, maxAge time.Duration, maxBytes int64) jetstream.StreamConfig {
	if replicas <= 0 {
		replicas = 1
	}
	if maxAge <= 0 {
		maxAge = DefaultJournalMaxAge
	}
	if maxBytes <= 0 {
		maxBytes = DefaultJournalMaxBytes
	}
	cfg := jetstream.StreamConfig{
		Name:        StreamJournal,
		Description: "decision journal: what the pipeline did with each event (diagnostic, bounded)",
		Subjects:    []string{JournalAll},
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

// OpenJournal provisions the journal stream (idempotently, writing only
// what differs) with the bus's replica count and returns it. The persist
// mode of a stream cannot change in place: when the replica count moved
// across 1 (a single-node home joined to a deployment), the old journal
// is dropped and created anew; it is a diagnostic record, not state.
func (b *Bus) OpenJournal(ctx context.Context, maxAge time.Duration, maxBytes int64) (jetstream.Stream, error) {
	want := JournalConfig(b.Cfg.Replicas, maxAge, maxBytes)
	s, err := provisionAsset(ctx, func(ctx context.Context) (jetstream.Stream, assetState, error) {
		s, err := b.JS.Stream(ctx, want.Name)
		if err != nil {
			return nil, assetMissing, err
		}
		return s, stateOf(sameJournal(s.CachedInfo().Config, want), s.CachedInfo().Cluster), nil
	}, func(ctx context.Context) (jetstream.Stream, error) {
		if s, err := b.JS.Stream(ctx, want.Name); err == nil && s.CachedInfo().Config.PersistMode != want.PersistMode {
			if err := b.JS.DeleteStream(ctx, want.Name); err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
				return nil, err
			}
		}
		return b.JS.CreateOrUpdateStream(ctx, want)
	})
	if err != nil {
		return nil, fmt.Errorf("bus: provision stream %s: %w", StreamJournal, err)
	}
	return s, nil
}

func sameJournal(have, want jetstream.StreamConfig) bool {
	return slices.Equal(have.Subjects, want.Subjects) && have.MaxAge == want.MaxAge && have.MaxBytes == want.MaxBytes && have.Replicas == want.Replicas &&
		have.PersistMode == want.PersistMode && have.AllowDirect == want.AllowDirect && have.Description == want.Description &&
		have.Storage == want.Storage && have.Retention == want.Retention
}
