package sentinels

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentproto/sentinel"
)

// Seen window bounds: at least the last SeenKeep ids of a sentinel and
// every id younger than SeenMinAge are kept (GitHub redelivers up to three
// days back).
const (
	SeenKeep   = 1000
	SeenMinAge = 72 * time.Hour
	// seenPruneEvery is how many marks a sentinel makes between prunes.
	seenPruneEvery = 256
)

// Seen is the long part of the persisted per-sentinel dedup window: the
// record itself holds the digests of its last MaxRecentSeen handled ids
// (written atomically with its counters); digests evicted from that ring
// land here, one KV key per (sentinel, digest) valued with the time, and
// are pruned past SeenMinAge beyond the newest SeenKeep.
type Seen struct {
	kv  jetstream.KeyValue
	now func() time.Time
}

// NewSeen returns the seen window on the bucket.
func NewSeen(kv jetstream.KeyValue, now func() time.Time) *Seen {
	if now == nil {
		now = time.Now
	}
	return &Seen{kv: kv, now: now}
}

func seenKey(sentinelID, eventID string) string {
	return sentinelID + "." + sentinel.SeenDigest(eventID)
}

// Has reports whether the event id is in the sentinel's window.
func (s *Seen) Has(ctx context.Context, sentinelID, eventID string) (bool, error) {
	_, err := s.kv.Get(ctx, seenKey(sentinelID, eventID))
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, jetstream.ErrKeyNotFound), errors.Is(err, jetstream.ErrKeyDeleted):
		return false, nil
	}
	return false, fmt.Errorf("seen lookup: %w", err)
}

// Mark records the event id as handled.
func (s *Seen) Mark(ctx context.Context, sentinelID, eventID string) error {
	return s.Keep(ctx, sentinelID, sentinel.SeenDigest(eventID))
}

// Keep stores a digest evicted from a record's seen ring in the long window.
func (s *Seen) Keep(ctx context.Context, sentinelID, digest string) error {
	var buf [8]byte
	binary.BigEndian.PutUint64(buf[:], uint64(s.now().UnixMilli()))
	if _, err := s.kv.Put(ctx, sentinelID+"."+digest, buf[:]); err != nil {
		return fmt.Errorf("seen keep: %w", err)
	}
	return nil
}

// ShouldPrune reports whether a sentinel that has made marks marks is due a
// prune.
func ShouldPrune(marks int) bool { return marks > SeenKeep && marks%seenPruneEvery == 0 }

// Prune drops a sentinel's ids beyond the newest SeenKeep that are older
// than SeenMinAge.
func (s *Seen) Prune(ctx context.Context, sentinelID string) (int, error) {
	type entry struct {
		key string
		ms  int64
	}
	lister, err := s.kv.ListKeysFiltered(ctx, sentinelID+".*")
	if err != nil {
		return 0, fmt.Errorf("seen prune list: %w", err)
	}
	var entries []entry
	for k := range lister.Keys() {
		e, err := s.kv.Get(ctx, k)
		if err != nil || len(e.Value()) != 8 {
			continue
		}
		entries = append(entries, entry{k, int64(binary.BigEndian.Uint64(e.Value()))})
	}
	if len(entries) <= SeenKeep {
		return 0, nil
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].ms > entries[j].ms })
	cutoff := s.now().Add(-SeenMinAge).UnixMilli()
	dropped := 0
	for _, e := range entries[SeenKeep:] {
		if e.ms < cutoff {
			if err := s.kv.Purge(ctx, e.key); err == nil {
				dropped++
			}
		}
	}
	return dropped, nil
}

// Forget drops every id of a removed sentinel.
func (s *Seen) Forget(ctx context.Context, sentinelID string) error {
	lister, err := s.kv.ListKeysFiltered(ctx, sentinelID+".*")
	if err != nil {
		return fmt.Errorf("seen forget: %w", err)
	}
	for k := range lister.Keys() {
		_ = s.kv.Purge(ctx, k)
	}
	return nil
}
