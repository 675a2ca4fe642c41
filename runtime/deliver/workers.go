package deliver

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus"
	"github.com/agentproto/sentinel/runtime/metrics"
	"github.com/agentproto/sentinel/runtime/park"
)

// WorkersConfig configures the delivery workers.
type WorkersConfig struct {
	// RetryBase and RetryMax bound the Nak backoff of a failed delivery:
	// RetryBase * 2^(attempt-1), capped at RetryMax (defaults 1s and 60s).
	RetryBase time.Duration `mapstructure:"retry_base"`
	RetryMax  time.Duration `mapstructure:"retry_max"`
	// HandleTimeout bounds one pipeline run (default 30s).
	HandleTimeout time.Duration `mapstructure:"handle_timeout"`
}

// DefaultWorkersConfig returns the defaults.
func DefaultWorkersConfig() WorkersConfig {
	return WorkersConfig{RetryBase: time.Second, RetryMax: time.Minute, HandleTimeout: 30 * time.Second}
}

// Workers run one consumer loop per partition.
type Workers struct {
	Bus      *bus.Bus
	Pipeline *Pipeline
	Park     *park.Journal
	Metrics  *metrics.Metrics
	Log      *slog.Logger
	Cfg      WorkersConfig

	stopping atomic.Bool
	mu       sync.Mutex
	iters    []jetstream.MessagesContext
	wg       sync.WaitGroup
	cancel   context.CancelFunc
}

// Start starts one goroutine per partition. It returns once every consumer
// is attached.
func (w *Workers) Start(ctx context.Context) error {
	if w.Cfg.RetryBase <= 0 {
		w.Cfg = DefaultWorkersConfig()
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	w.cancel = cancel
	for p := 0; p < w.Bus.Cfg.Partitions; p++ {
		cons, err := w.Bus.PartitionConsumer(ctx, p)
		if err != nil {
			w.Stop()
			return err
		}
		it, err := cons.Messages(jetstream.PullMaxMessages(1))
		if err != nil {
			w.Stop()
			return err
		}
		w.mu.Lock()
		w.iters = append(w.iters, it)
		w.mu.Unlock()
		w.wg.Add(1)
		go w.loop(runCtx, p, it)
	}
	return nil
}

// Stop stops taking messages, lets the message in hand finish (its ack
// completes) and waits. It is idempotent.
func (w *Workers) Stop() {
	if !w.stopping.CompareAndSwap(false, true) {
		return
	}
	w.mu.Lock()
	for _, it := range w.iters {
		it.Drain()
	}
	w.mu.Unlock()
	done := make(chan struct{})
	go func() { w.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		if w.cancel != nil {
			w.cancel()
		}
		<-done
	}
	if w.cancel != nil {
		w.cancel()
	}
}

func (w *Workers) loop(ctx context.Context, partition int, it jetstream.MessagesContext) {
	defer w.wg.Done()
	for {
		msg, err := it.Next()
		if err != nil {
			if errors.Is(err, jetstream.ErrMsgIteratorClosed) || w.stopping.Load() {
				return
			}
			w.Log.Warn("consumer error", "partition", partition, "err", err)
			continue
		}
		w.handle(ctx, msg)
	}
}

func (w *Workers) handle(ctx context.Context, msg jetstream.Msg) {
	sid := sentinelOf(msg.Subject())
	var ev sentinel.Event
	if err := json.Unmarshal(msg.Data(), &ev); err != nil || ev.ID == "" {
		// Nothing publishes undecodable events; journal it rather than loop.
		_ = w.Park.Park(ctx, sid, park.Record{SentinelID: sid, Item: string(msg.Data()), Reason: "undecodable event"}, "")
		_ = msg.Term()
		return
	}
	hctx, cancel := context.WithTimeout(ctx, w.Cfg.HandleTimeout)
	res, err := w.Pipeline.Handle(hctx, sid, &ev)
	cancel()
	if err != nil {
		delay := w.backoff(msg)
		w.Log.Warn("delivery failed; will retry", "sentinel", sid, "event", ev.ID, "retry_in", delay, "err", err)
		w.Metrics.Inc(func(m *metrics.Metrics) prometheusCounter { return m.DeliveryRetries })
		_ = msg.NakWithDelay(delay)
		return
	}
	// A plain ack: the event is already handled and marked seen, so an ack
	// lost on the way only causes a redelivery that the seen window and the
	// inbox's message id absorb.
	if err := msg.Ack(); err != nil {
		w.Log.Warn("ack failed; the event will be redelivered and deduplicated", "sentinel", sid, "event", ev.ID, "err", err)
	}
	w.Log.Debug("event handled", "sentinel", sid, "event", ev.ID, "result", string(res))
}

func (w *Workers) backoff(msg jetstream.Msg) time.Duration {
	attempt := uint64(1)
	if md, err := msg.Metadata(); err == nil && md.NumDelivered > 0 {
		attempt = md.NumDelivered
	}
	d := w.Cfg.RetryBase
	for i := uint64(1); i < attempt && d < w.Cfg.RetryMax; i++ {
		d *= 2
	}
	if d > w.Cfg.RetryMax {
		d = w.Cfg.RetryMax
	}
	return d
}

func sentinelOf(subject string) string {
	i := strings.LastIndexByte(subject, '.')
	if i < 0 {
		return subject
	}
	return subject[i+1:]
}

// partitionLabel renders a partition number as a metric label.
func partitionLabel(p int) string { return strconv.Itoa(p) }

// ReportPending records each partition consumer's pending count.
func (w *Workers) ReportPending(ctx context.Context) {
	for p := 0; p < w.Bus.Cfg.Partitions; p++ {
		c, err := w.Bus.PartitionConsumer(ctx, p)
		if err != nil {
			continue
		}
		if info, err := c.Info(ctx); err == nil {
			w.Metrics.SetConsumerPending(partitionLabel(p), float64(info.NumPending+uint64(info.NumAckPending)))
		}
	}
}
