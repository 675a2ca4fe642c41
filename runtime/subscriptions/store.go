package subscriptions

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentproto/sentinel"
)

// Record is one subscription, stored in the bucket at "sub.<id>".
type Record struct {
	ID        string          `json:"id"`
	Mode      string          `json:"mode"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Principal string          `json:"principal"`
	// SentinelID is the sentinel behind the subscription.
	SentinelID string `json:"sentinelId"`
	// CreatedSeq is the feeds stream's last sequence just before the
	// sentinel was created: a cursor before it may have missed events.
	CreatedSeq uint64 `json:"createdSeq"`
	CreatedMs  int64  `json:"createdMs"`
	// LastSeenMs is the last poll, stream heartbeat or refresh.
	LastSeenMs int64 `json:"lastSeenMs"`
	// Streams are the open push streams: stream id -> lease expiry (ms).
	Streams map[string]int64 `json:"streams,omitempty"`

	// Webhook mode.
	URL string `json:"url,omitempty"`
	// Secrets sign deliveries: the current first, then the one it
	// replaced until OldSecretUntilMs (dual signing while rotating).
	Secrets          []string `json:"secrets,omitempty"`
	OldSecretUntilMs int64    `json:"oldSecretUntilMs,omitempty"`
	// ExpiresMs is the granted TTL's end (0: no expiry).
	ExpiresMs int64          `json:"expiresMs,omitempty"`
	Status    DeliveryStatus `json:"deliveryStatus"`
	// StartSeq is the feed position delivery began after.
	StartSeq uint64 `json:"startSeq,omitempty"`
	// SettledSeq is the feed position of the last event settled
	// (acknowledged, abandoned or lost) and PendingAfter how many of the
	// subscription's events followed it then; InFlightSeq is an event
	// that failed and awaits a retry (0: none), after InFlightAttempts
	// POSTs. They bound the retries and detect gaps; GapPending is a gap
	// whose envelope was not accepted yet.
	SettledSeq       uint64 `json:"settledSeq,omitempty"`
	PendingAfter     uint64 `json:"pendingAfter,omitempty"`
	InFlightSeq      uint64 `json:"inFlightSeq,omitempty"`
	InFlightAttempts int    `json:"inFlightAttempts,omitempty"`
	GapPending       bool   `json:"gapPending,omitempty"`
	// Stats count the POSTs of the suspension window; SuspendedMs is when
	// delivery was suspended (0: it is not).
	Stats       Stats `json:"stats"`
	SuspendedMs int64 `json:"suspendedMs,omitempty"`
}

// DeliveryStatus is the SEP's deliveryStatus of a webhook subscription.
type DeliveryStatus struct {
	Active         bool    `json:"active"`
	LastDeliveryAt *string `json:"lastDeliveryAt"`
	LastError      *string `json:"lastError"`
	FailedSince    *string `json:"failedSince,omitempty"`
}

// SubscriptionID derives the id of a subscription key: deterministic over
// (mode, principal, url, name, canonical arguments).
func SubscriptionID(mode, principal, url, name string, canonicalArgs []byte) string {
	h := sha256.New()
	for _, p := range []string{mode, principal, url, name, string(canonicalArgs)} {
		fmt.Fprintf(h, "%d:%s;", len(p), p)
	}
	return "sub_" + hex.EncodeToString(h.Sum(nil)[:8])
}

// Store keeps subscription records in the bucket.
type Store struct{ kv jetstream.KeyValue }

// NewStore returns the store over the MCP Events bucket (Assets.KV).
func NewStore(kv jetstream.KeyValue) *Store { return &Store{kv: kv} }

func recKey(id string) string { return "sub." + id }

// Get returns a record and its revision (sentinel.ErrNotFound when absent).
func (s *Store) Get(ctx context.Context, id string) (*Record, uint64, error) {
	e, err := s.kv.Get(ctx, recKey(id))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, 0, fmt.Errorf("subscription %s: %w", id, sentinel.ErrNotFound)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("read subscription %s: %w", id, err)
	}
	var r Record
	if err := json.Unmarshal(e.Value(), &r); err != nil {
		return nil, 0, fmt.Errorf("decode subscription %s: %w", id, err)
	}
	return &r, e.Revision(), nil
}

// Create stores a new record; sentinel.ErrConflict when it exists.
func (s *Store) Create(ctx context.Context, r *Record) error {
	raw, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode subscription %s: %w", r.ID, err)
	}
	if _, err := s.kv.Create(ctx, recKey(r.ID), raw); err != nil {
		if errors.Is(err, jetstream.ErrKeyExists) {
			return fmt.Errorf("subscription %s: %w", r.ID, sentinel.ErrConflict)
		}
		return fmt.Errorf("store subscription %s: %w", r.ID, err)
	}
	return nil
}

// errSkip ends an Update without writing.
var errSkip = errors.New("skip")

// Update applies fn to the record with compare-and-set, retrying on a
// conflict; fn returning errSkip writes nothing. It returns the record as
// stored (sentinel.ErrNotFound when absent).
func (s *Store) Update(ctx context.Context, id string, fn func(*Record) error) (*Record, error) {
	for attempt := 0; ; attempt++ {
		r, rev, err := s.Get(ctx, id)
		if err != nil {
			return nil, err
		}
		if err := fn(r); err != nil {
			if errors.Is(err, errSkip) {
				return r, nil
			}
			return nil, err
		}
		raw, err := json.Marshal(r)
		if err != nil {
			return nil, fmt.Errorf("encode subscription %s: %w", id, err)
		}
		_, err = s.kv.Update(ctx, recKey(id), raw, rev)
		if err == nil {
			return r, nil
		}
		if attempt < 50 && (errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch)) {
			continue
		}
		return nil, fmt.Errorf("update subscription %s: %w", id, err)
	}
}

// Delete removes a record (absent is not an error).
func (s *Store) Delete(ctx context.Context, id string) error {
	if err := s.kv.Delete(ctx, recKey(id)); err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
		return fmt.Errorf("delete subscription %s: %w", id, err)
	}
	return nil
}

// List returns every record.
func (s *Store) List(ctx context.Context) ([]*Record, error) {
	lister, err := s.kv.ListKeysFiltered(ctx, "sub.*")
	if err != nil {
		return nil, fmt.Errorf("list subscriptions: %w", err)
	}
	var out []*Record
	for k := range lister.Keys() {
		r, _, err := s.Get(ctx, strings.TrimPrefix(k, "sub."))
		if errors.Is(err, sentinel.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}
