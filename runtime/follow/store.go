package follow

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/runtime/pause"
)

// ErrNotFound is returned (wrapped) for an unknown follow id or key.
var ErrNotFound = sentinel.Errorf(sentinel.CodeFollowNotFound, "follow not found")

// Store keeps follows in the follows KV bucket keyed by id. A follow with
// a key has an index entry beside it (keyIndex: "key.<digest of the key>"
// holding its id), created with a compare-and-set, so an upsert by key
// finds or claims its id atomically across nodes: two nodes upserting one
// key at once write one follow (issue 21, item 9; the process-local mutex
// kept key upserts unique on one node only).
type Store struct {
	kv  jetstream.KeyValue
	bus KeyLister
	mu  sync.Mutex
	// pause holds the named pause points (tests; nil in production):
	// PointUpsert.
	pause *pause.Points
}

// PointUpsert is reached (key: the follow's key) when an upsert by key has
// decided the follow's id and before it writes the follow.
const PointUpsert pause.Point = "follow.upsert"

// keyIndexPrefix prefixes the index entries of follow keys; follow ids
// (fol_...) never start with it.
const keyIndexPrefix = "key."

// keyIndex is the index entry of a follow key.
func keyIndex(key string) string {
	sum := sha256.Sum256([]byte(key))
	return keyIndexPrefix + hex.EncodeToString(sum[:16])
}

// StoreOption configures a Store.
type StoreOption func(*Store)

// WithStoreBus lists the bucket's keys through b (bus.Bus.ListKeys: a
// direct read of the replica this node holds when the cluster cannot
// create a consumer, so a node cut off from quorum still lists its
// follows). Without it the store lists through the bucket's consumer.
func WithStoreBus(b KeyLister) StoreOption { return func(s *Store) { s.bus = b } }

// WithStorePause sets the store's pause points (tests).
func WithStorePause(p *pause.Points) StoreOption { return func(s *Store) { s.pause = p } }

// NewStore returns the store on a bucket.
func NewStore(kv jetstream.KeyValue, opts ...StoreOption) *Store {
	s := &Store{kv: kv}
	for _, o := range opts {
		o(s)
	}
	return s
}

// KeyLister lists a bucket's keys (*bus.Bus is one: bus.ListKeys).
type KeyLister interface {
	ListKeys(ctx context.Context, kv jetstream.KeyValue) ([]string, error)
}

// listKeys lists the bucket's keys, through the bus when one is set.
func (s *Store) listKeys(ctx context.Context) ([]string, error) {
	if s.bus != nil {
		return s.bus.ListKeys(ctx, s.kv)
	}
	lister, err := s.kv.ListKeys(ctx)
	if err != nil {
		return nil, err
	}
	var keys []string
	for k := range lister.Keys() {
		keys = append(keys, k)
	}
	return keys, nil
}

// Get returns one follow by id.
func (s *Store) Get(ctx context.Context, id string) (*sentinel.Follow, uint64, error) {
	if !sentinel.ValidFollowID(id) {
		return nil, 0, fmt.Errorf("get follow %q: %w", id, ErrNotFound)
	}
	e, err := s.kv.Get(ctx, id)
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		return nil, 0, fmt.Errorf("get follow %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("get follow %s: %w", id, err)
	}
	var f sentinel.Follow
	if err := json.Unmarshal(e.Value(), &f); err != nil || f.Follower == "" {
		return nil, 0, fmt.Errorf("decode follow %s: %w", id, ErrNotFound)
	}
	return &f, e.Revision(), nil
}

// List returns the follows (of one follower when follower is set), oldest
// first.
func (s *Store) List(ctx context.Context, follower string) ([]sentinel.Follow, error) {
	all, err := s.listKeys(ctx)
	if err != nil {
		// Neither the bucket's consumer nor a direct read of it answered:
		// the store is unavailable, not the node broken (never a 500).
		return nil, sentinel.Wrap(sentinel.CodeUnavailable, err, "list follows: the store did not answer")
	}
	var keys []string
	for _, k := range all {
		if !strings.HasPrefix(k, keyIndexPrefix) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys) // fol_<ULID>: creation order
	out := []sentinel.Follow{}
	for _, k := range keys {
		f, _, err := s.Get(ctx, k)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if follower == "" || f.Follower == follower {
			out = append(out, *f)
		}
	}
	return out, nil
}

// Find returns a follow by id, else by key.
func (s *Store) Find(ctx context.Context, idOrKey string) (*sentinel.Follow, error) {
	if f, _, err := s.Get(ctx, idOrKey); err == nil {
		return f, nil
	} else if !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	all, err := s.List(ctx, "")
	if err != nil {
		return nil, err
	}
	for i := range all {
		if all[i].Key != "" && all[i].Key == idOrKey {
			return &all[i], nil
		}
	}
	return nil, fmt.Errorf("find follow %q: %w", idOrKey, ErrNotFound)
}

// Upsert stores f: a follow with the same key keeps its id and createdAt
// and is replaced (created = false); otherwise a new id is minted.
func (s *Store) Upsert(ctx context.Context, f sentinel.Follow, createdAt string) (sentinel.Follow, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f.Key == "" {
		f.ID = sentinel.NewFollowID()
		f.CreatedAt = createdAt
		return f, true, s.put(ctx, f)
	}
	id, err := s.claimKey(ctx, f.Key)
	if err != nil {
		return sentinel.Follow{}, false, err
	}
	f.ID, f.CreatedAt = id, createdAt
	created := true
	if old, _, err := s.Get(ctx, id); err == nil {
		f.CreatedAt, created = old.CreatedAt, false
	} else if !errors.Is(err, ErrNotFound) {
		return sentinel.Follow{}, false, err
	}
	if err := s.pause.At(ctx, PointUpsert, f.Key); err != nil {
		return sentinel.Follow{}, false, err
	}
	return f, created, s.put(ctx, f)
}

// claimKey returns the id of the follow of key: the one its index entry
// names, else (a follow stored before the index, found by a scan, or a new
// id) the one this call indexes with a create, which another node's
// concurrent claim of the same key either wins or reads back.
func (s *Store) claimKey(ctx context.Context, key string) (string, error) {
	idx := keyIndex(key)
	for attempt := 0; attempt < 3; attempt++ {
		e, err := s.kv.Get(ctx, idx)
		if err == nil {
			return string(e.Value()), nil
		}
		if !errors.Is(err, jetstream.ErrKeyNotFound) && !errors.Is(err, jetstream.ErrKeyDeleted) {
			return "", fmt.Errorf("read follow key %q: %w", key, err)
		}
		id := sentinel.NewFollowID()
		if legacy, err := s.scanKey(ctx, key); err == nil {
			id = legacy.ID
		} else if !errors.Is(err, ErrNotFound) {
			return "", err
		}
		_, err = s.kv.Create(ctx, idx, []byte(id))
		if err == nil {
			return id, nil
		}
		if !errors.Is(err, jetstream.ErrKeyExists) {
			return "", fmt.Errorf("index follow key %q: %w", key, err)
		}
	}
	return "", fmt.Errorf("index follow key %q: %w", key, sentinel.ErrConflict)
}

// scanKey finds a follow by key among every follow.
func (s *Store) scanKey(ctx context.Context, key string) (*sentinel.Follow, error) {
	all, err := s.List(ctx, "")
	if err != nil {
		return nil, err
	}
	for i := range all {
		if all[i].Key == key {
			return &all[i], nil
		}
	}
	return nil, fmt.Errorf("find follow %q: %w", key, ErrNotFound)
}

func (s *Store) put(ctx context.Context, f sentinel.Follow) error {
	raw, err := json.Marshal(f)
	if err != nil {
		return fmt.Errorf("encode follow %s: %w", f.ID, err)
	}
	if _, err := s.kv.Put(ctx, f.ID, raw); err != nil {
		return fmt.Errorf("store follow %s: %w", f.ID, err)
	}
	return nil
}

// Remove deletes a follow by id or key and returns its id.
func (s *Store) Remove(ctx context.Context, idOrKey string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := s.Find(ctx, idOrKey)
	if err != nil {
		return "", err
	}
	if err := s.kv.Delete(ctx, f.ID); err != nil {
		return "", fmt.Errorf("delete follow %s: %w", f.ID, err)
	}
	if f.Key != "" {
		// The index entry goes too, when it still names this follow.
		if e, err := s.kv.Get(ctx, keyIndex(f.Key)); err == nil && string(e.Value()) == f.ID {
			_ = s.kv.Delete(ctx, keyIndex(f.Key), jetstream.LastRevision(e.Revision()))
		}
	}
	return f.ID, nil
}

// SetFollower re-points every follow of from to to and returns how many.
func (s *Store) SetFollower(ctx context.Context, from, to string) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	all, err := s.List(ctx, from)
	if err != nil {
		return 0, err
	}
	for _, f := range all {
		f.Follower = to
		if err := s.put(ctx, f); err != nil {
			return 0, err
		}
	}
	return len(all), nil
}
