package journal

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus"
)

// Drop reasons, the label values of sentinel_journal_dropped_total.
const (
	// DropOverflow: the queue was full (the journal could not keep up).
	DropOverflow = "overflow"
	// DropPublish: the publish failed or its ack never came.
	DropPublish = "publish_error"
	// DropClosed: recorded after the writer stopped.
	DropClosed = "closed"
)

// DropReasons are every drop reason, for metrics created at zero.
var DropReasons = []string{DropOverflow, DropPublish, DropClosed}

// Defaults of WriterConfig.
const (
	DefaultQueueSize  = 4096
	DefaultMaxPending = 256
)

// WriterConfig configures a Writer.
type WriterConfig struct {
	// QueueSize bounds the entries waiting to be published (default
	// DefaultQueueSize); past it Record drops and counts.
	QueueSize int
	// MaxPending bounds the publishes awaiting their ack (default
	// DefaultMaxPending).
	MaxPending int
	// Node names this node in every entry.
	Node string
}

// WriterOption sets one of a writer's optional collaborators.
type WriterOption func(*Writer)

// WithOnDrop is called once per dropped entry with its reason (a metric).
func WithOnDrop(onDrop func(reason string)) WriterOption {
	return func(w *Writer) { w.onDrop = onDrop }
}

// WithLogger logs failed publishes to l (default: discard).
func WithLogger(l *slog.Logger) WriterOption { return func(w *Writer) { w.log = l } }

// Writer journals decisions off the delivery path: Record puts an entry on
// a bounded in-memory queue and returns at once; one goroutine owned by
// the writer publishes the queue with asynchronous publishes (at most
// MaxPending awaiting their ack), never waiting per entry. An entry the
// queue has no room for is dropped and counted: the journal is a
// diagnostic record, never a reason to slow or fail a delivery.
type Writer struct {
	cfg    WriterConfig
	onDrop func(reason string)
	log    *slog.Logger
	pub    *bus.AsyncPublisher
	queue  chan sentinel.Decision

	stopping atomic.Bool
	stopOnce sync.Once
	stop     chan struct{}
	done     chan struct{}
}

// ackTimeout bounds how long one publish may wait for its ack before it
// counts as dropped.
const ackTimeout = 10 * time.Second

// stallRetry is how long the publisher waits before retrying a publish
// refused because MaxPending acks are outstanding.
const stallRetry = 50 * time.Millisecond

// AsyncPublishers make asynchronous publishers on the bus's connection
// (*bus.Bus is one: bus.NewAsyncPublisher).
type AsyncPublishers interface {
	NewAsyncPublisher(cfg bus.AsyncConfig) (*bus.AsyncPublisher, error)
}

// NewWriter returns a writer publishing through an asynchronous publisher
// of its own from b (so its pending-ack bound is its own). Call Start,
// then Stop.
func NewWriter(b AsyncPublishers, cfg WriterConfig, opts ...WriterOption) (*Writer, error) {
	if cfg.QueueSize <= 0 {
		cfg.QueueSize = DefaultQueueSize
	}
	if cfg.MaxPending <= 0 {
		cfg.MaxPending = DefaultMaxPending
	}
	w := &Writer{cfg: cfg, queue: make(chan sentinel.Decision, cfg.QueueSize), stop: make(chan struct{}), done: make(chan struct{})}
	for _, o := range opts {
		o(w)
	}
	if w.log == nil {
		w.log = slog.New(slog.DiscardHandler)
	}
	pub, err := b.NewAsyncPublisher(bus.AsyncConfig{MaxPending: cfg.MaxPending, AckTimeout: ackTimeout, StallWait: stallRetry,
		OnError: func(error) { w.drop(DropPublish) }})
	if err != nil {
		return nil, err
	}
	w.pub = pub
	return w, nil
}

// Start starts the publishing goroutine.
func (w *Writer) Start() { go w.run() }

// Record queues an entry and returns at once; it never blocks. A full
// queue (or a stopped writer) drops the entry and counts it. The entry's
// Ts and Node are filled when empty. Safe for concurrent use.
func (w *Writer) Record(e sentinel.Decision) {
	if w == nil {
		return
	}
	if w.stopping.Load() {
		w.drop(DropClosed)
		return
	}
	if e.Node == "" {
		e.Node = w.cfg.Node
	}
	select {
	case w.queue <- e:
	default:
		w.drop(DropOverflow)
	}
}

func (w *Writer) drop(reason string) {
	if w.onDrop != nil {
		w.onDrop(reason)
	}
}

// Stop publishes what is queued, waits for the outstanding acks (bounded
// by ctx) and stops the goroutine. It is idempotent.
func (w *Writer) Stop(ctx context.Context) error {
	w.stopOnce.Do(func() {
		w.stopping.Store(true)
		close(w.stop)
	})
	select {
	case <-w.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-w.pub.Complete():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (w *Writer) run() {
	defer close(w.done)
	for {
		select {
		case e := <-w.queue:
			w.publish(e)
		case <-w.stop:
			for {
				select {
				case e := <-w.queue:
					w.publish(e)
				default:
					return
				}
			}
		}
	}
}

// publish sends one entry without waiting for its ack; while MaxPending
// acks are outstanding it waits (back-pressure onto the queue, which
// drops past its bound), giving up once the writer stops.
func (w *Writer) publish(e sentinel.Decision) {
	raw, err := json.Marshal(e)
	if err != nil {
		w.drop(DropPublish)
		return
	}
	subj := Subject(e.SentinelID, e.EventID)
	// No message id: an entry is published once (a failed one is dropped
	// and counted, never retried), so there is no copy to deduplicate.
	for {
		err := w.pub.Publish(subj, raw, "")
		if err == nil {
			return
		}
		if errors.Is(err, bus.ErrPublishStalled) {
			select {
			case <-w.stop:
				// Stopping: one more try after the outstanding acks.
				select {
				case <-w.pub.Complete():
				case <-time.After(ackTimeout):
				}
				if err := w.pub.Publish(subj, raw, ""); err != nil {
					w.drop(DropPublish)
				}
				return
			default:
				continue
			}
		}
		w.log.Debug("journal publish failed", "err", err)
		w.drop(DropPublish)
		return
	}
}
