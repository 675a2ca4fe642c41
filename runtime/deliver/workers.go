package deliver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus"
	"github.com/agentproto/sentinel/runtime/metrics"
)

// WorkersConfig configures the delivery workers.
type WorkersConfig struct {
	// RetryBase and RetryMax bound the Nak backoff of a failed delivery:
	// RetryBase * 2^(attempt-1), capped at RetryMax (defaults 1s and 60s).
	RetryBase time.Duration `mapstructure:"retry_base"`
	RetryMax  time.Duration `mapstructure:"retry_max"`
	// HandleTimeout bounds one pipeline run (default 30s). A resume hook
	// runs inside it (see sessions.Resolver), so it bounds resume hooks too.
	HandleTimeout time.Duration `mapstructure:"handle_timeout"`
	// MaxAttempts bounds the deliveries of one event (default 20, by the
	// message's delivery count): a failure on the last one parks the event
	// with its error and acks it, so one event never holds its partition
	// forever. An error no retry can fix (Permanent) parks at once.
	MaxAttempts int `mapstructure:"max_attempts"`
}

// DefaultMaxAttempts is the default of WorkersConfig.MaxAttempts: with the
// default backoff (1s doubling to 1m) an event is retried for about 15
// minutes.
const DefaultMaxAttempts = 20

// DefaultWorkersConfig returns the defaults.
func DefaultWorkersConfig() WorkersConfig {
	return WorkersConfig{RetryBase: time.Second, RetryMax: time.Minute, HandleTimeout: 30 * time.Second, MaxAttempts: DefaultMaxAttempts}
}

// EventLog is the partitioned events stream the workers pull from
// (*bus.Bus is one).
type EventLog interface {
	Partitions() int
	AckWait() time.Duration
	PartitionConsumer(ctx context.Context, p int) (jetstream.Consumer, error)
	TrimEvents(ctx context.Context) (int, error)
}

// Workers run one fetch loop per partition. Build them with NewWorkers.
type Workers struct {
	events   EventLog
	pipeline *Pipeline
	cfg      WorkersConfig

	stopping    atomic.Bool
	acked       atomic.Int64 // acks since the last trim of the events stream
	wg          sync.WaitGroup
	stopFetch   context.CancelFunc
	cancelWork  context.CancelFunc
	startedOnce atomic.Bool
}

// fetchWait bounds one pull request; an idle partition re-pulls after it.
// Short, so a pull swallowed by a consumer leader that was cut off (a
// partition) is noticed in seconds, not half a minute: 16 idle partitions
// cost about three requests a second.
const fetchWait = 5 * time.Second

// Start starts one goroutine per partition. It returns once every consumer
// is found.
func (w *Workers) Start(ctx context.Context) error {
	fetchCtx, stopFetch := context.WithCancel(context.WithoutCancel(ctx))
	workCtx, cancelWork := context.WithCancel(context.WithoutCancel(ctx))
	w.stopFetch, w.cancelWork = stopFetch, cancelWork
	w.startedOnce.Store(true)
	for p := 0; p < w.events.Partitions(); p++ {
		cons, err := w.events.PartitionConsumer(ctx, p)
		if err != nil {
			w.Stop()
			return err
		}
		w.wg.Add(1)
		go w.loop(fetchCtx, workCtx, p, cons)
	}
	w.acked.Store(1) // trim once after a start: the last run may have acked since its last trim
	w.wg.Add(1)
	go w.trimLoop(fetchCtx)
	return nil
}

// trimEvery is how often the workers purge the events every partition
// acknowledged (bus.TrimEvents), when anything was acknowledged since the
// last trim; an idle node sends nothing.
const trimEvery = 5 * time.Second

// trimTimeout bounds one trim.
const trimTimeout = 10 * time.Second

// trimLoop trims the events stream every trimEvery while events are being
// acknowledged. A failed trim is retried at the next tick; until then the
// stream only holds more acknowledged events (the seen window absorbs
// them if a consumer is ever reset).
func (w *Workers) trimLoop(ctx context.Context) {
	defer w.wg.Done()
	t := time.NewTicker(trimEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		n := w.acked.Swap(0)
		if n == 0 {
			continue
		}
		tctx, cancel := context.WithTimeout(ctx, trimTimeout)
		_, err := w.events.TrimEvents(tctx)
		cancel()
		if err != nil && ctx.Err() == nil {
			w.acked.Add(n)
			w.pipeline.log.Warn("trimming acknowledged events failed; retrying", "err", err)
		}
	}
}

// Stop stops pulling, lets the message in hand finish (its ack completes,
// bounded by 10 s) and waits. It is idempotent.
func (w *Workers) Stop() {
	if !w.stopping.CompareAndSwap(false, true) || !w.startedOnce.Load() {
		return
	}
	w.stopFetch()
	done := make(chan struct{})
	go func() { w.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		w.cancelWork()
		<-done
	}
	w.cancelWork()
}

// loop pulls one message at a time (one in flight per partition keeps the
// order per sentinel). Each pull is a fresh Fetch(1) issued by this
// goroutine after the previous message was handled, so no pull can be
// skipped: a long-lived Consume or Messages iterator with a batch of one
// can skip its follow-up request when a reply is handled before its pull
// goroutine clears its in-progress mark (nats.go v1.55), and then waits
// 30 s for its missed-heartbeat timer (BENCHMARKS.md, "A benchmark that
// always finishes"). A request the server drops or expires ends the Fetch
// (its own heartbeat check catches a lost one within 10 s) and is retried.
func (w *Workers) loop(fetchCtx, workCtx context.Context, partition int, cons jetstream.Consumer) {
	defer w.wg.Done()
	for !w.stopping.Load() {
		fctx, cancel := context.WithTimeout(fetchCtx, fetchWait)
		batch, err := cons.Fetch(1, jetstream.FetchContext(fctx))
		if err != nil {
			cancel()
			if fetchCtx.Err() != nil {
				return
			}
			w.pipeline.log.Warn("consumer fetch failed", "partition", partition, "err", err)
			select {
			case <-fetchCtx.Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
			continue
		}
		for msg := range batch.Messages() {
			w.handle(workCtx, msg)
		}
		cancel()
		if err := batch.Error(); err != nil && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) && !errors.Is(err, bus.ErrTimeout) && fetchCtx.Err() == nil {
			w.pipeline.log.Debug("consumer pull ended", "partition", partition, "err", err)
		}
	}
}

func (w *Workers) handle(ctx context.Context, msg jetstream.Msg) {
	sid := sentinelOf(msg.Subject())
	var ev sentinel.Event
	if err := json.Unmarshal(msg.Data(), &ev); err != nil || ev.ID == "" {
		// Nothing publishes undecodable events; journal it rather than loop.
		if w.pipeline.park.Park(ctx, sid, sentinel.Parked{SentinelID: sid, Item: string(msg.Data()), Reason: "undecodable event"}, "") == nil {
			w.pipeline.metrics.IncVec(func(m *metrics.Metrics) prometheusCounterVec { return m.Parked }, "undecodable")
		}
		if msg.Term() == nil {
			w.acked.Add(1)
		}
		return
	}
	if md, err := msg.Metadata(); err == nil {
		w.pipeline.metrics.ObserveStep(metrics.StepQueued, time.Since(md.Timestamp))
		w.pipeline.metrics.ObserveDelivery(md.NumPending)
	}
	d := newDelivery(w.events.AckWait(), time.Now)
	_ = w.pipeline.pause.At(ctx, PointReceived, ev.ID)
	hctx, cancel := context.WithTimeout(withDelivery(ctx, d), w.cfg.HandleTimeout)
	stopProgress := w.keepInProgress(hctx, msg, d, ev.ID)
	res, err := w.pipeline.Handle(hctx, sid, &ev)
	stopProgress()
	cancel()
	_ = w.pipeline.pause.At(ctx, PointSettle, ev.ID)
	if !d.held() {
		// Not this node's to settle any more (ownership.go): neither ack
		// nor nak nor park; the redelivery's holder settles it.
		w.pipeline.log.Info("delivery left to its live holder: held past the ack wait, or stored by another node meanwhile", "sentinel", sid, "event", ev.ID, "result", string(res), "err", err)
		_ = w.pipeline.pause.At(ctx, PointAbandon, ev.ID)
		return
	}
	if err != nil && !w.giveUp(ctx, msg, sid, &ev, err) {
		delay := w.backoff(msg)
		w.pipeline.log.Warn("delivery failed; will retry", "sentinel", sid, "event", ev.ID, "retry_in", delay, "err", err)
		w.pipeline.metrics.Inc(func(m *metrics.Metrics) prometheusCounter { return m.DeliveryRetries })
		w.pipeline.noteRetry(sid, &ev, err, attemptOf(msg), delay)
		_ = msg.NakWithDelay(delay)
		return
	}
	if err != nil {
		res = ResultParked
	}
	// A plain ack: the event is handled and marked seen, so an ack lost on
	// the way only causes a redelivery that the seen ring and the inbox's
	// message id absorb. (The next pull is a fresh request, so one refused
	// while this ack is in flight is simply retried.)
	if err := msg.Ack(); err != nil {
		w.pipeline.log.Warn("ack failed; the event will be redelivered and deduplicated", "sentinel", sid, "event", ev.ID, "err", err)
	} else {
		w.acked.Add(1)
	}
	w.pipeline.log.Debug("event handled", "sentinel", sid, "event", ev.ID, "result", string(res))
}

// giveUp parks and marks seen an event whose failure is permanent or
// whose last attempt failed, and reports whether it did (the message may
// then be acked). Parking that fails leaves the event to be retried.
func (w *Workers) giveUp(ctx context.Context, msg jetstream.Msg, sid string, ev *sentinel.Event, cause error) bool {
	attempt := attemptOf(msg)
	var reason string
	switch {
	case Permanent(cause):
		reason = fmt.Sprintf("undeliverable: %v", cause)
	case attempt >= uint64(w.cfg.MaxAttempts):
		reason = fmt.Sprintf("undeliverable after %d attempts: %v", attempt, cause)
	default:
		return false
	}
	if err := w.pipeline.GiveUp(ctx, sid, ev, reason); err != nil {
		w.pipeline.log.Warn("parking an undeliverable event failed; will retry", "sentinel", sid, "event", ev.ID, "err", err)
		return false
	}
	w.pipeline.log.Warn("event parked as undeliverable", "sentinel", sid, "event", ev.ID, "attempt", attempt, "err", cause)
	return true
}

// attemptOf is the message's delivery count (1 for the first delivery).
func attemptOf(msg jetstream.Msg) uint64 {
	if md, err := msg.Metadata(); err == nil && md.NumDelivered > 0 {
		return md.NumDelivered
	}
	return 1
}

// keepInProgress tells JetStream the message is still being handled every
// quarter of the ack wait, so a slow delivery (a resume hook) is not
// redelivered meanwhile, as long as the worker still holds it (d: a ping
// after the hold was lost, a pause, wins nothing back). The returned
// function stops it and waits.
func (w *Workers) keepInProgress(ctx context.Context, msg jetstream.Msg, d *delivery, eventID string) func() {
	every := w.events.AckWait() / 4
	if every <= 0 {
		return func() {}
	}
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				if w.pipeline.pause.At(ctx, PointPing, eventID) != nil || !d.renew() {
					return
				}
				_ = msg.InProgress()
			}
		}
	}()
	return func() { close(done); <-stopped }
}

func (w *Workers) backoff(msg jetstream.Msg) time.Duration {
	attempt := attemptOf(msg)
	d := w.cfg.RetryBase
	for i := uint64(1); i < attempt && d < w.cfg.RetryMax; i++ {
		d *= 2
	}
	if d > w.cfg.RetryMax {
		d = w.cfg.RetryMax
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
	for p := 0; p < w.events.Partitions(); p++ {
		c, err := w.events.PartitionConsumer(ctx, p)
		if err != nil {
			continue
		}
		if info, err := c.Info(ctx); err == nil {
			w.pipeline.metrics.SetConsumerPending(partitionLabel(p), float64(info.NumPending+uint64(info.NumAckPending)))
		}
	}
}
