package bus

import (
	"context"
	"fmt"
	"sync"

	"github.com/nats-io/nats.go/jetstream"
)

// The events stream keeps its events with limits retention: an ack no
// longer deletes the event (with work-queue retention each ack removed it,
// and with one event in flight that emptied the stream's last block, so
// the store deleted and created a block file per event: about half of the
// node's CPU on the push path, BENCHMARKS.md). The events each partition's
// consumer acknowledged are purged in bulk instead (TrimEvents), so the
// stream holds what is undelivered plus what was acknowledged since the
// last trim, and nothing undelivered ever ages out.
//
// JetStream refuses to change a stream's retention, so the limits stream
// has a name and subjects of its own (StreamEvents). Its work-queue
// predecessor was never released, so no migration from it is kept.

// TrimEvents purges, partition by partition, the events that partition's
// consumer has itself acknowledged: the events of the partition's subjects
// at or below its ack floor (AckFloor.Stream: every event of the partition
// up to it is acknowledged). It never reads an idle-looking partition as
// "everything acknowledged": nats-server answers a publish before it counts
// the event pending for the consumer (on another goroutine, and in a
// cluster on the consumer's leader), so a partition can report nothing
// pending while it holds a just-acknowledged event; a floor taken from the
// stream's last sequence would purge it unseen (issue 21, item 1). An event
// above its consumer's ack floor is never purged.
//
// It returns how many partitions it purged. Safe to run on every node at
// once (a purge below an ack floor is idempotent); each node skips the
// partitions whose floor did not move since its own last trim.
func (b *Bus) TrimEvents(ctx context.Context) (int, error) {
	info, err := b.events.Info(ctx)
	if err != nil {
		return 0, fmt.Errorf("bus: trim events: %w", err)
	}
	if info.State.Msgs == 0 {
		return 0, nil
	}
	purged := 0
	for p := 0; p < b.Cfg.Partitions; p++ {
		c, err := b.events.Consumer(ctx, ConsumerName(p))
		if err != nil {
			return purged, fmt.Errorf("bus: trim events: consumer %s: %w", ConsumerName(p), err)
		}
		floor := c.CachedInfo().AckFloor.Stream
		if floor < info.State.FirstSeq || !b.trims.moved(p, floor) {
			continue
		}
		if err := b.events.Purge(ctx, jetstream.WithPurgeSubject(PartitionFilter(p)), jetstream.WithPurgeSequence(floor+1)); err != nil {
			return purged, fmt.Errorf("bus: trim partition %d below %d: %w", p, floor+1, err)
		}
		b.trims.done(p, floor)
		purged++
	}
	return purged, nil
}

// trimmed remembers, per partition, the ack floor this node last purged
// below, so a trim skips the partitions whose floor did not move.
type trimmed struct {
	mu    sync.Mutex
	floor map[int]uint64 // mu must be held
}

func (t *trimmed) moved(p int, floor uint64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return floor > t.floor[p]
}

func (t *trimmed) done(p int, floor uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.floor == nil {
		t.floor = map[int]uint64{}
	}
	t.floor[p] = max(t.floor[p], floor)
}
