package bus

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentproto/sentinel"
)

// KV is a small compare-and-set view of a KV bucket whose errors are the
// domain's storage sentinels (sentinel.ErrNotFound, sentinel.ErrConflict).
// It satisfies providers.KV.
type KV struct {
	kv jetstream.KeyValue
}

// NewKV wraps a bucket.
func NewKV(kv jetstream.KeyValue) *KV { return &KV{kv: kv} }

// Get returns the value and revision of key, or sentinel.ErrNotFound.
func (k *KV) Get(ctx context.Context, key string) ([]byte, uint64, error) {
	e, err := k.kv.Get(ctx, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		return nil, 0, fmt.Errorf("kv get %s: %w", key, sentinel.ErrNotFound)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("kv get %s: %w", key, err)
	}
	return e.Value(), e.Revision(), nil
}

// Create stores key only if it does not exist, else sentinel.ErrConflict.
func (k *KV) Create(ctx context.Context, key string, val []byte) (uint64, error) {
	rev, err := k.kv.Create(ctx, key, val)
	if errors.Is(err, jetstream.ErrKeyExists) {
		return 0, fmt.Errorf("kv create %s: %w", key, sentinel.ErrConflict)
	}
	if err != nil {
		return 0, fmt.Errorf("kv create %s: %w", key, StorageCoded(err))
	}
	return rev, nil
}

// Update stores key only if its revision is rev, else sentinel.ErrConflict.
func (k *KV) Update(ctx context.Context, key string, val []byte, rev uint64) (uint64, error) {
	nrev, err := k.kv.Update(ctx, key, val, rev)
	if errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		return 0, fmt.Errorf("kv update %s: %w", key, sentinel.ErrConflict)
	}
	if err != nil {
		return 0, fmt.Errorf("kv update %s: %w", key, StorageCoded(err))
	}
	return nrev, nil
}

// Put stores key unconditionally.
func (k *KV) Put(ctx context.Context, key string, val []byte) (uint64, error) {
	rev, err := k.kv.Put(ctx, key, val)
	if err != nil {
		return 0, fmt.Errorf("kv put %s: %w", key, StorageCoded(err))
	}
	return rev, nil
}

// Delete removes key; a missing key is not an error.
func (k *KV) Delete(ctx context.Context, key string) error {
	if err := k.kv.Delete(ctx, key); err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
		return fmt.Errorf("kv delete %s: %w", key, err)
	}
	return nil
}

// Keys lists every key (empty for an empty bucket).
func (k *KV) Keys(ctx context.Context) ([]string, error) {
	lister, err := k.kv.ListKeys(ctx)
	if err != nil {
		return nil, fmt.Errorf("kv keys: %w", err)
	}
	var out []string
	for key := range lister.Keys() {
		out = append(out, key)
	}
	return out, nil
}
