package sentinels

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentproto/sentinel"
)

// Seen window bounds: at least the last SeenKeep ids of a sentinel (its
// record's ring) and every id younger than SeenMinAge (GitHub redelivers
// up to three days back) are kept.
const (
	SeenKeep   = sentinel.MaxRecentSeen
	SeenMinAge = 72 * time.Hour
	// markerTTL bounds how long a purge marker of the bucket lives.
	markerTTL = time.Minute
)

// Seen is the long part of the persisted per-sentinel dedup window: the
// record itself holds the digests of its last MaxRecentSeen handled ids
// (written atomically with its counters); digests evicted from that ring
// land here, one KV key per (sentinel, digest) valued with the time and
// created with a TTL of SeenMinAge, so the bucket forgets them by itself
// (nothing prunes it on the delivery path). An evicted id is at least as
// old as its eviction, so the window still holds every id younger than
// SeenMinAge.
type Seen struct {
	kv  jetstream.KeyValue
	now func() time.Time
	ttl time.Duration
}

// SeenOption configures a Seen.
type SeenOption func(*Seen)

// WithSeenClock reads the time from now (time.Now by default).
func WithSeenClock(now func() time.Time) SeenOption { return func(s *Seen) { s.now = now } }

// NewSeen returns the seen window on the bucket (SeenBucket, which
// allows per-key TTLs).
func NewSeen(kv jetstream.KeyValue, opts ...SeenOption) *Seen {
	s := &Seen{kv: kv, ttl: SeenMinAge}
	for _, o := range opts {
		o(s)
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s
}

// WithTTL returns a copy of the window whose kept digests expire after d
// instead of SeenMinAge (tests use it to see keys expire).
func (s *Seen) WithTTL(d time.Duration) *Seen {
	cp := *s
	cp.ttl = d
	return &cp
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

// Keep stores a digest evicted from a record's seen ring in the long
// window for SeenMinAge. It is idempotent: a digest already kept stays as
// it is.
func (s *Seen) Keep(ctx context.Context, sentinelID, digest string) error {
	return s.keep(ctx, sentinelID+"."+digest, s.now(), s.ttl)
}

func (s *Seen) keep(ctx context.Context, key string, at time.Time, ttl time.Duration) error {
	var buf [8]byte
	binary.BigEndian.PutUint64(buf[:], uint64(at.UnixMilli()))
	if _, err := s.kv.Create(ctx, key, buf[:], jetstream.KeyTTL(ttl)); err != nil && !errors.Is(err, jetstream.ErrKeyExists) {
		return fmt.Errorf("seen keep: %w", err)
	}
	return nil
}

// Forget drops every id of a removed sentinel.
func (s *Seen) Forget(ctx context.Context, sentinelID string) error {
	lister, err := s.kv.ListKeysFiltered(ctx, sentinelID+".*")
	if err != nil {
		return fmt.Errorf("seen forget: %w", err)
	}
	for k := range lister.Keys() {
		_ = s.kv.Purge(ctx, k, jetstream.PurgeTTL(markerTTL))
	}
	return nil
}
