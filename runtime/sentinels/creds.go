package sentinels

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// CredStore keeps provider setup fields (sensitive ones included) in a KV
// bucket keyed by slug. It implements providers.CredentialSource. Values
// never leave the daemon through a view.
type CredStore struct {
	kv jetstream.KeyValue
}

// NewCredStore returns the store.
func NewCredStore(kv jetstream.KeyValue) *CredStore { return &CredStore{kv: kv} }

// Credentials returns the stored fields of a provider (empty when none).
func (c *CredStore) Credentials(ctx context.Context, slug string) (map[string]string, error) {
	e, err := c.kv.Get(ctx, slug)
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("credentials of %s: %w", slug, err)
	}
	out := map[string]string{}
	if err := json.Unmarshal(e.Value(), &out); err != nil {
		return nil, fmt.Errorf("credentials of %s: corrupt record", slug)
	}
	return out, nil
}

// Merge stores fields over the existing ones (an empty value deletes a
// field).
func (c *CredStore) Merge(ctx context.Context, slug string, fields map[string]string) error {
	cur, err := c.Credentials(ctx, slug)
	if err != nil {
		return err
	}
	for k, v := range fields {
		if v == "" {
			delete(cur, k)
		} else {
			cur[k] = v
		}
	}
	raw, err := json.Marshal(cur)
	if err != nil {
		return fmt.Errorf("encode credentials: %w", err)
	}
	if _, err := c.kv.Put(ctx, slug, raw); err != nil {
		return fmt.Errorf("store credentials of %s: %w", slug, err)
	}
	return nil
}
