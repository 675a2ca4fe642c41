package bus

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// EnsureKeyValue provisions a bucket whose config its owning package
// declares (rule 10: features own their buckets; bus only provisions):
// created, or updated where it differs, idempotently. The bus's replica
// count applies unless cfg sets one (the zero Storage is file storage).
func (b *Bus) EnsureKeyValue(ctx context.Context, cfg jetstream.KeyValueConfig) (jetstream.KeyValue, error) {
	if cfg.Replicas == 0 {
		cfg.Replicas = b.Cfg.Replicas
	}
	kv, err := ensureKeyValue(ctx, b.JS, cfg)
	if err != nil {
		return nil, fmt.Errorf("bus: provision bucket %s: %w", cfg.Bucket, err)
	}
	return kv, nil
}
