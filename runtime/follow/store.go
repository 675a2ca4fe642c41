package follow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentproto/sentinel"
)

// ErrNotFound is returned (wrapped) for an unknown follow id or key.
var ErrNotFound = sentinel.Errorf(sentinel.CodeFollowNotFound, "follow not found")

// Store keeps follows in the follows KV bucket keyed by id. Writes on this
// node are serialized so key upserts stay unique.
type Store struct {
	kv jetstream.KeyValue
	mu sync.Mutex
}

// NewStore returns the store on a bucket.
func NewStore(kv jetstream.KeyValue) *Store { return &Store{kv: kv} }

// Get returns one follow by id.
func (s *Store) Get(ctx context.Context, id string) (*Follow, uint64, error) {
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
	var f Follow
	if err := json.Unmarshal(e.Value(), &f); err != nil || f.Follower == "" {
		return nil, 0, fmt.Errorf("decode follow %s: %w", id, ErrNotFound)
	}
	return &f, e.Revision(), nil
}

// List returns the follows (of one follower when follower is set), oldest
// first.
func (s *Store) List(ctx context.Context, follower string) ([]Follow, error) {
	lister, err := s.kv.ListKeys(ctx)
	if err != nil {
		return nil, fmt.Errorf("list follows: %w", err)
	}
	var keys []string
	for k := range lister.Keys() {
		keys = append(keys, k)
	}
	sort.Strings(keys) // fol_<ULID>: creation order
	out := []Follow{}
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
func (s *Store) Find(ctx context.Context, idOrKey string) (*Follow, error) {
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
func (s *Store) Upsert(ctx context.Context, f Follow, createdAt string) (Follow, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f.Key != "" {
		if old, err := s.Find(ctx, f.Key); err == nil && old.Key == f.Key {
			f.ID, f.CreatedAt = old.ID, old.CreatedAt
			return f, false, s.put(ctx, f)
		} else if err != nil && !errors.Is(err, ErrNotFound) {
			return Follow{}, false, err
		}
	}
	f.ID = sentinel.NewFollowID()
	f.CreatedAt = createdAt
	return f, true, s.put(ctx, f)
}

func (s *Store) put(ctx context.Context, f Follow) error {
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
