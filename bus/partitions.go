package bus

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/nats-io/nats.go/jetstream"
)

// partitionsKey pins a cluster's partition count in the setup bucket.
const partitionsKey = "_bus.partitions"

// agreePartitions pins the partition count the first node of a cluster
// provisions, and refuses a node configured with another: other nodes
// pull from the consumers and hash sentinels with their count, so one
// node's different count would strand events and break order.
func (b *Bus) agreePartitions(ctx context.Context) error {
	want := strconv.Itoa(b.Cfg.Partitions)
	return provision(ctx, func(ctx context.Context) error {
		_, err := b.setup.Create(ctx, partitionsKey, []byte(want))
		if err == nil {
			return nil
		}
		if !errors.Is(err, jetstream.ErrKeyExists) {
			return err
		}
		e, gerr := b.setup.Get(ctx, partitionsKey)
		if gerr != nil {
			return gerr
		}
		if have := string(e.Value()); have != want {
			return &jetstream.APIError{Code: 400, Description: fmt.Sprintf("the cluster runs with bus.partitions=%s and this node is configured with %s: use the same count on every node", have, want)}
		}
		return nil
	})
}

// retireExtraPartitions handles a changed partition count. Changing it
// moves sentinels to other partitions, so it is refused while the events
// stream still holds undelivered events (their order per sentinel would
// break); otherwise the consumers of partitions beyond the count go.
func (b *Bus) retireExtraPartitions(ctx context.Context) error {
	names := b.events.ConsumerNames(ctx)
	existing, extra := 0, []string{}
	for name := range names.Name() {
		var p int
		if _, err := fmt.Sscanf(name, "deliver-%d", &p); err != nil {
			continue
		}
		existing++
		if p >= b.Cfg.Partitions {
			extra = append(extra, name)
		}
	}
	if err := names.Err(); err != nil {
		return fmt.Errorf("bus: list consumers: %w", err)
	}
	if existing == 0 || existing == b.Cfg.Partitions {
		return nil
	}
	if b.Cfg.Replicas > 1 {
		return nil // a cluster's count is pinned by agreePartitions
	}
	undelivered, err := b.undelivered(ctx)
	if err != nil {
		return err
	}
	if undelivered > 0 {
		return fmt.Errorf("bus: the events stream still holds %d undelivered events across %d partitions: start with bus.partitions=%d until they are delivered, then change it", undelivered, existing, existing)
	}
	for _, name := range extra {
		if err := b.events.DeleteConsumer(ctx, name); err != nil {
			return fmt.Errorf("bus: retire consumer %s: %w", name, err)
		}
	}
	return nil
}

// undelivered counts the events the partition consumers of the events
// stream have not acknowledged yet (pending or in flight).
func (b *Bus) undelivered(ctx context.Context) (uint64, error) {
	var n uint64
	names := b.events.ConsumerNames(ctx)
	for name := range names.Name() {
		c, err := b.events.Consumer(ctx, name)
		if err != nil {
			return 0, fmt.Errorf("bus: consumer %s: %w", name, err)
		}
		n += c.CachedInfo().NumPending + uint64(c.CachedInfo().NumAckPending)
	}
	if err := names.Err(); err != nil {
		return 0, fmt.Errorf("bus: list consumers: %w", err)
	}
	return n, nil
}
