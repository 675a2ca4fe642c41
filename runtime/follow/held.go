package follow

import (
	"context"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// held keeps the lifecycle messages whose batches are still pending
// (unacknowledged until their digest is delivered), telling JetStream
// every interval that they are in progress: a batch may wait up to
// MaxBatchMs, far past the consumer's ack wait.
type held struct {
	mu   sync.Mutex
	msgs map[jetstream.Msg]struct{}
}

func newHeld() *held { return &held{msgs: map[jetstream.Msg]struct{}{}} }

func (h *held) hold(m jetstream.Msg) {
	h.mu.Lock()
	h.msgs[m] = struct{}{}
	h.mu.Unlock()
}

func (h *held) drop(m jetstream.Msg) {
	h.mu.Lock()
	delete(h.msgs, m)
	h.mu.Unlock()
}

// run marks every held message in progress each interval until ctx ends.
func (h *held) run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		h.mu.Lock()
		msgs := make([]jetstream.Msg, 0, len(h.msgs))
		for m := range h.msgs {
			msgs = append(msgs, m)
		}
		h.mu.Unlock()
		for _, m := range msgs {
			_ = m.InProgress()
		}
	}
}
