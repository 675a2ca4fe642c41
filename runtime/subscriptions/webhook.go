package subscriptions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus"
)

// Webhooks delivers webhook subscriptions. Each has a durable consumer of
// its feed with one event in flight, which every node pulls with one
// long-lived pull. JetStream hands each event to one puller, so a
// subscription is delivered once, not once per node. An idle
// subscription costs each node one waiting pull request, renewed every
// 30 s, not a fetch a second.
//
// The POST's 2xx acks an event. A failure retries it with bounded backoff
// (retry_attempts POSTs). A 410, a 413 or the last attempt settles it for
// good. A gap (events the feed dropped before they reached the endpoint)
// is announced by a gap envelope before the next event. A sustained
// failure rate suspends delivery until a refresh. The sweep's
// terminations POST a terminated envelope.
type Webhooks struct {
	svc     *Service
	client  *http.Client
	limiter *hostLimiter

	mu      sync.Mutex
	ctx     context.Context
	wg      *sync.WaitGroup
	workers map[string]context.CancelFunc
	watcher jetstream.KeyWatcher // the current watch (mu must be held)
}

// newWebhooks builds the webhook dispatcher of svc.
func newWebhooks(svc *Service) *Webhooks {
	return &Webhooks{svc: svc, client: newCallbackClient(svc.cfg.Timeout, svc.cfg.AllowPrivateCallbacks),
		limiter: newHostLimiter(svc.cfg.VerifyPerHostPerMinute), workers: map[string]context.CancelFunc{}}
}

// Running returns how many delivery workers this node runs (one per
// active webhook subscription).
func (w *Webhooks) Running() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.workers)
}

// ensureConsumer creates the subscription's durable consumer: a fresh
// subscription's starts after its StartSeq (replacing any left by an
// earlier incarnation); an existing one's is kept, or re-created after
// the last settled event when it is missing.
func (w *Webhooks) ensureConsumer(ctx context.Context, rec *Record, fresh bool) error {
	s := w.svc
	name := WebhookConsumer(rec.ID)
	start := max(rec.StartSeq, rec.SettledSeq)
	if !fresh {
		if _, err := s.feed.Stream().Consumer(ctx, name); err == nil {
			return nil
		}
		start = max(start, rec.CreatedSeq)
	} else if err := s.feed.Stream().DeleteConsumer(ctx, name); err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
		return fmt.Errorf("replace the webhook consumer of %s: %w", rec.ID, err)
	}
	cfg := jetstream.ConsumerConfig{
		Durable:       name,
		Description:   "MCP Events webhook deliveries of " + rec.ID,
		FilterSubject: FeedFilter(sentinel.ModeWebhook, rec.ID),
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:   start + 1,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       s.cfg.Timeout + 5*time.Second,
		MaxAckPending: 1,
		// Attempts are counted in the record (POSTs only: a suspended
		// or interrupted delivery does not spend one).
		MaxDeliver: -1,
	}
	if _, err := s.feed.Stream().CreateOrUpdateConsumer(ctx, cfg); err != nil {
		return fmt.Errorf("create the webhook consumer of %s: %w", rec.ID, err)
	}
	return nil
}

// watermark is the safe-to-persist position of a webhook subscription:
// every event at or before it was acknowledged or abandoned.
func (w *Webhooks) watermark(ctx context.Context, rec *Record) uint64 {
	floor := max(rec.StartSeq, rec.CreatedSeq)
	c, err := w.svc.feed.Stream().Consumer(ctx, WebhookConsumer(rec.ID))
	if err != nil {
		return floor
	}
	info, err := c.Info(ctx)
	if err != nil {
		return floor
	}
	return max(info.AckFloor.Stream, floor)
}

// dropConsumer deletes an ended subscription's consumer (best effort).
func (w *Webhooks) dropConsumer(ctx context.Context, id string) {
	err := w.svc.feed.Stream().DeleteConsumer(ctx, WebhookConsumer(id))
	if err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
		w.svc.log.Warn("deleting a webhook consumer failed", "subscription", id, "err", err)
	}
}

// Start watches the webhook subscriptions and runs one delivery worker
// per active subscription (a suspended one has none) until ctx ends. A
// watch that ends by itself (its channel closed: a reconnect, a stream
// leader change) is started again with backoff, its workers kept; the new
// watch's initial values reconcile them (issue 21, item 10: the dispatcher
// used to stop every worker and exit for good).
func (w *Webhooks) Start(ctx context.Context, wg *sync.WaitGroup) error {
	watcher, err := w.svc.store.kv.Watch(ctx, "sub.*")
	if err != nil {
		return fmt.Errorf("watch webhook subscriptions: %w", err)
	}
	w.mu.Lock()
	w.ctx, w.wg = ctx, wg
	w.mu.Unlock()
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer w.stopAll()
		for attempt := 0; ; {
			if watcher != nil {
				w.setWatcher(watcher)
				w.follow(ctx, wg, watcher)
				_ = watcher.Stop()
				attempt = 0
			}
			if ctx.Err() != nil {
				return
			}
			attempt++
			if !sleepCtx(ctx, backoff(time.Second, attempt)) {
				return
			}
			if watcher, err = w.svc.store.kv.Watch(ctx, "sub.*"); err != nil {
				watcher = nil
				w.svc.log.Warn("watching webhook subscriptions again failed; retrying", "err", err)
				continue
			}
			w.svc.log.Info("webhook subscriptions watched again")
		}
	}()
	return nil
}

// follow applies a watch's updates until it ends or ctx does: after its
// initial values it stops the workers of subscriptions it did not list
// (gone while no watch ran).
func (w *Webhooks) follow(ctx context.Context, wg *sync.WaitGroup, watcher jetstream.KeyWatcher) {
	listed := map[string]bool{}
	for {
		select {
		case <-ctx.Done():
			return
		case e, ok := <-watcher.Updates():
			if !ok {
				if ctx.Err() == nil {
					w.svc.log.Warn("the webhook subscriptions watch ended; watching again")
				}
				return
			}
			if e == nil {
				if listed != nil {
					w.stopUnlisted(listed)
					listed = nil
				}
				continue
			}
			id := strings.TrimPrefix(e.Key(), "sub.")
			var rec Record
			if e.Operation() != jetstream.KeyValuePut || json.Unmarshal(e.Value(), &rec) != nil || rec.Mode != sentinel.ModeWebhook {
				w.stop(id)
				continue
			}
			if listed != nil {
				listed[id] = true
			}
			if rec.Status.Active {
				w.run(ctx, wg, id)
			} else {
				w.stop(id)
			}
		}
	}
}

// setWatcher records the current watch (tests end it).
func (w *Webhooks) setWatcher(kw jetstream.KeyWatcher) {
	w.mu.Lock()
	w.watcher = kw
	w.mu.Unlock()
}

// stopUnlisted stops the workers of subscriptions a watch's initial values
// did not list.
func (w *Webhooks) stopUnlisted(listed map[string]bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for id, c := range w.workers {
		if !listed[id] {
			c()
			delete(w.workers, id)
		}
	}
}

func (w *Webhooks) run(ctx context.Context, wg *sync.WaitGroup, id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.workers[id]; ok {
		return
	}
	wctx, cancel := context.WithCancel(ctx)
	w.workers[id] = cancel
	wg.Add(1)
	go func() { defer wg.Done(); w.work(wctx, id) }()
}

func (w *Webhooks) stop(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if c, ok := w.workers[id]; ok {
		c()
		delete(w.workers, id)
	}
}

func (w *Webhooks) stopAll() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for id, c := range w.workers {
		c()
		delete(w.workers, id)
	}
}

// webhookPullWait bounds one pull of a subscription's consumer: the
// worker keeps one request waiting at the server, renewed this often.
const webhookPullWait = 30 * time.Second

// work pulls one subscription's consumer and delivers until ctx ends. Each
// pull is a fresh Fetch(1) issued after the previous event was settled:
// a long-lived Messages iterator with a batch of one can skip its
// follow-up request under load and then wait 30 s for its heartbeat
// timer (nats.go v1.55; BENCHMARKS.md, "A benchmark that always
// finishes"), as the delivery workers found (runtime/deliver).
func (w *Webhooks) work(ctx context.Context, id string) {
	s := w.svc
	for ctx.Err() == nil {
		cons, err := s.feed.Stream().Consumer(ctx, WebhookConsumer(id))
		if err != nil {
			if !sleepCtx(ctx, 200*time.Millisecond) {
				return
			}
			continue
		}
		for ctx.Err() == nil {
			fctx, cancel := context.WithTimeout(ctx, webhookPullWait)
			batch, err := cons.Fetch(1, jetstream.FetchContext(fctx))
			if err != nil {
				cancel()
				break // the consumer went away, or the bus: look it up again
			}
			for msg := range batch.Messages() {
				w.deliver(ctx, id, msg)
			}
			cancel()
			if err := batch.Error(); err != nil && !errors.Is(err, context.DeadlineExceeded) &&
				!errors.Is(err, context.Canceled) && !errors.Is(err, bus.ErrTimeout) {
				break
			}
		}
		if !sleepCtx(ctx, 50*time.Millisecond) {
			return
		}
	}
}

// deliver POSTs one feed event (after a gap envelope when events were
// lost before it) and settles its message and the record.
func (w *Webhooks) deliver(ctx context.Context, id string, msg jetstream.Msg) {
	s := w.svc
	rec, _, err := s.store.Get(ctx, id)
	if errors.Is(err, sentinel.ErrNotFound) || (err == nil && rec.ExpiresMs != 0 && s.now().UnixMilli() >= rec.ExpiresMs) {
		_ = msg.Term() // the subscription ended: nothing more is delivered
		return
	}
	if err != nil || !rec.Status.Active {
		// Unreadable, or suspended: left for a retry (or the refresh
		// that reactivates it), spending no attempt.
		_ = msg.NakWithDelay(s.cfg.RetryBackoff)
		return
	}
	meta, err := msg.Metadata()
	if err != nil {
		_ = msg.Term()
		return
	}
	seq := meta.Sequence.Stream
	var ev sentinel.Event
	if json.Unmarshal(msg.Data(), &ev) != nil {
		_ = msg.Term()
		return
	}
	attempts := 0
	if rec.InFlightSeq == seq {
		attempts = rec.InFlightAttempts
	}
	bind := BindOf(rec.Principal, rec.Name, rec.Arguments)
	gap := rec.GapPending || w.lost(ctx, rec, seq)
	var res postResult
	if gap {
		c, err := s.cursors.Sign(ctx, seq-1, bind)
		if err != nil {
			_ = msg.NakWithDelay(s.cfg.RetryBackoff)
			return
		}
		res = post(ctx, w.client, rec.URL, rec.ID, controlID("gap"), w.secrets(rec), gapBody(c), s.now())
		if res.Category == "" || res.Status == http.StatusGone {
			gap = false
		}
	}
	if !gap {
		occ := occurrence(rec.Name, stored{Seq: seq, Time: meta.Timestamp, Ev: ev})
		if c, err := s.cursors.Sign(ctx, seq, bind); err == nil {
			occ.Cursor = &c
		}
		body, _ := json.Marshal(occ)
		res = post(ctx, w.client, rec.URL, rec.ID, ev.ID, w.secrets(rec), body, s.now())
	}
	if ctx.Err() != nil {
		return // stopping: the event is redelivered
	}
	attempts++
	final := !gap && (res.Category == "" || res.Status == http.StatusGone || res.Status == http.StatusRequestEntityTooLarge)
	final = final || attempts >= s.cfg.RetryAttempts
	if final {
		if res.Category == "" {
			_ = msg.Ack()
		} else {
			_ = msg.Term() // refused for good, or abandoned (the watermark moves past it)
		}
	} else {
		_ = msg.NakWithDelay(backoff(s.cfg.RetryBackoff, attempts))
	}
	now := s.now()
	_, err = s.store.Update(ctx, id, func(r *Record) error {
		if final {
			r.SettledSeq, r.PendingAfter, r.InFlightSeq, r.InFlightAttempts = seq, meta.NumPending, 0, 0
		} else {
			r.InFlightSeq, r.InFlightAttempts = seq, attempts
		}
		r.GapPending = gap                 // an unannounced gap is announced before the next event
		if res.Status != http.StatusGone { // a 410 is the receiver's choice, not a failure
			s.outcome(r, now, res.Category)
		}
		return nil
	})
	if err != nil && !errors.Is(err, sentinel.ErrNotFound) {
		s.log.Warn("recording a webhook delivery failed", "subscription", id, "err", err)
	}
}

// backoff is the delay before attempt n+1: base doubled per attempt, at
// most ten times base.
func backoff(base time.Duration, n int) time.Duration {
	d := base
	for i := 1; i < n && d < 10*base; i++ {
		d *= 2
	}
	return min(d, 10*base)
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
