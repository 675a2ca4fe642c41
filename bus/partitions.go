package bus

import (
	"context"
	"fmt"
	"time"
)

// partitionSettle is how long a clustered node waits for the events
// stream's partition consumers to stop changing before it takes a count
// below its own as the cluster's. Nodes that start together create the
// consumers one by one; a node that counted them midway would refuse to
// start, and by refusing leave the creating node without the majority its
// R3 consumers need, so every later start would count the same.
const partitionSettle = 10 * time.Second

// settleInterval spaces the re-counts.
const settleInterval = 250 * time.Millisecond

// awaitPeerConsumers re-counts the events stream's partition consumers
// (seen at first) until there are Cfg.Partitions of them, or the count has
// not changed for partitionSettle, or ctx ends; it returns the last count.
func (b *Bus) awaitPeerConsumers(ctx context.Context, seen int) (int, error) {
	changed := time.Now()
	for seen != b.Cfg.Partitions && time.Since(changed) < partitionSettle {
		select {
		case <-ctx.Done():
			return seen, fmt.Errorf("bus: wait for the events stream's consumers: %w", ctx.Err())
		case <-time.After(settleInterval):
		}
		n, err := b.countPartitionConsumers(ctx)
		if err != nil {
			return seen, err
		}
		if n != seen {
			seen, changed = n, time.Now()
		}
	}
	return seen, nil
}

// countPartitionConsumers counts the events stream's deliver-<p>
// consumers.
func (b *Bus) countPartitionConsumers(ctx context.Context) (int, error) {
	names := b.Events.ConsumerNames(ctx)
	n := 0
	for name := range names.Name() {
		var p int
		if _, err := fmt.Sscanf(name, "deliver-%d", &p); err == nil {
			n++
		}
	}
	if err := names.Err(); err != nil {
		return 0, fmt.Errorf("bus: list consumers: %w", err)
	}
	return n, nil
}
