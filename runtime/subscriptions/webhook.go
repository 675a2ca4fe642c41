package subscriptions

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus"
)

// secretGrace is how long deliveries stay signed with a replaced secret
// too (dual signing while the client rotates).
const secretGrace = 5 * time.Minute

// Webhooks delivers webhook subscriptions: each has a durable consumer of
// its feed with one event in flight, which any node may pull (JetStream
// hands each event to one puller, so one subscription is delivered once,
// not once per node); the POST's 2xx acks it, a failure retries it with
// bounded backoff, 410 and 413 and the last attempt abandon it.
type Webhooks struct {
	svc    *Service
	client *http.Client

	mu      sync.Mutex
	workers map[string]context.CancelFunc
}

// NewWebhooks builds the webhook dispatcher of svc.
func NewWebhooks(svc *Service) (*Webhooks, error) {
	return &Webhooks{svc: svc, client: newCallbackClient(svc.Cfg.Timeout, svc.Cfg.AllowPrivateCallbacks), workers: map[string]context.CancelFunc{}}, nil
}

type delivery struct {
	Mode   string `json:"mode"`
	URL    string `json:"url"`
	Secret string `json:"secret"`
}

type webhookParams struct {
	subParams
	Delivery *delivery    `json:"delivery"`
	TTLMs    *json.Number `json:"ttlMs"`
}

// SubscribeResult is the events/subscribe result.
type SubscribeResult struct {
	ResultType     string          `json:"resultType"`
	ID             string          `json:"id"`
	RefreshBefore  *string         `json:"refreshBefore"`
	Cursor         *string         `json:"cursor"`
	Truncated      bool            `json:"truncated"`
	DeliveryStatus *DeliveryStatus `json:"deliveryStatus,omitempty"`
}

// webhookRequest decodes and validates events/subscribe or unsubscribe.
func (s *Service) webhookRequest(ctx context.Context, principal string, raw json.RawMessage, subscribe bool) (*resolved, *delivery, *json.Number, error) {
	if s.Webhooks == nil {
		return nil, nil, nil, sentinel.Errorf(sentinel.CodeUnsupportedDelivery, "webhook delivery is not offered by this server")
	}
	if principal == "" {
		return nil, nil, nil, sentinel.Errorf(sentinel.CodeForbidden, "webhook subscriptions need an authenticated principal")
	}
	var p webhookParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, nil, nil, sentinel.Errorf(sentinel.CodeInvalidInput, "params do not match the method's shape: %s", jsonProblem(err))
	}
	var extra []string
	if subscribe {
		extra = []string{"delivery", "ttlMs"}
	} else {
		extra = []string{"delivery"}
	}
	r, err := s.resolve(ctx, principal, raw, extra...)
	if err != nil {
		return nil, nil, nil, err
	}
	if p.Delivery == nil || p.Delivery.URL == "" {
		return nil, nil, nil, sentinel.Errorf(sentinel.CodeInvalidCallback, "delivery.url is required")
	}
	if p.Delivery.Mode != "" && p.Delivery.Mode != sentinel.ModeWebhook {
		return nil, nil, nil, sentinel.Errorf(sentinel.CodeInvalidCallback, "delivery.mode must be \"webhook\"")
	}
	if _, err := checkCallback(p.Delivery.URL, s.Cfg.AllowPrivateCallbacks); err != nil {
		return nil, nil, nil, err
	}
	if subscribe {
		if _, err := checkSecret(p.Delivery.Secret); err != nil {
			return nil, nil, nil, err
		}
	}
	return r, p.Delivery, p.TTLMs, nil
}

// grant returns the TTL granted for a suggestion (nil: the default; an
// explicit null asks for no expiry, which this server does not grant).
func (s *Service) grant(ttl *json.Number) time.Duration {
	d := s.Cfg.TTLDefault
	if ttl != nil {
		if ms, err := ttl.Int64(); err == nil {
			d = time.Duration(ms) * time.Millisecond
		}
	}
	return min(max(d, s.Cfg.TTLMin), s.Cfg.TTLMax)
}

// Subscribe answers events/subscribe: it verifies the endpoint (challenge
// handshake, unless the URL is allowlisted or was verified for this
// principal), creates or refreshes the subscription and grants a TTL.
func (s *Service) Subscribe(ctx context.Context, principal string, raw json.RawMessage) (any, error) {
	// ttlMs null asks for no expiry, which this server never grants: a
	// finite refreshBefore answers it.
	r, d, ttl, err := s.webhookRequest(ctx, principal, raw, true)
	if err != nil {
		return nil, err
	}
	id := SubscriptionID(sentinel.ModeWebhook, principal, d.URL, r.Name, r.Canonical)
	now := s.Now()
	expires := now.Add(s.grant(ttl))
	if _, _, err := s.Store.Get(ctx, id); errors.Is(err, sentinel.ErrNotFound) {
		if err := s.Webhooks.verify(ctx, principal, id, d); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, err
	}
	rec, created, err := s.ensure(ctx, &Record{ID: id, Mode: sentinel.ModeWebhook, Name: r.Name, Arguments: r.Canonical, Principal: principal, URL: d.URL}, r,
		func(rec *Record) {
			if len(rec.Secrets) > 0 && rec.Secrets[0] != d.Secret {
				rec.Secrets = []string{d.Secret, rec.Secrets[0]}
				rec.OldSecretUntilMs = now.Add(secretGrace).UnixMilli()
			} else if len(rec.Secrets) == 0 {
				rec.Secrets = []string{d.Secret}
			}
			rec.ExpiresMs = expires.UnixMilli()
			rec.Status.Active = true
		})
	if err != nil {
		return nil, err
	}
	if err := s.Webhooks.ensureConsumer(ctx, rec); err != nil {
		return nil, err
	}
	res := SubscribeResult{ResultType: "complete", ID: id}
	rb := sentinel.FormatTime(expires)
	res.RefreshBefore = &rb
	first, last, err := s.Feed.Head(ctx)
	if err != nil {
		return nil, err
	}
	pos := rec.CreatedSeq
	if !created {
		pos = s.Webhooks.watermark(ctx, rec)
		st := rec.Status
		res.DeliveryStatus = &st
	}
	if r.hasCursor {
		_, res.Truncated = startOf(r.after, rec.CreatedSeq, first, last)
	}
	c, err := s.Cursors.Sign(ctx, pos, r.bind)
	if err != nil {
		return nil, err
	}
	res.Cursor = &c
	return res, nil
}

// Unsubscribe answers events/unsubscribe: it ends the subscription of the
// key at once (NotFound {kind: subscription} when there is none).
func (s *Service) Unsubscribe(ctx context.Context, principal string, raw json.RawMessage) (any, error) {
	r, d, _, err := s.webhookRequest(ctx, principal, raw, false)
	if err != nil {
		return nil, err
	}
	id := SubscriptionID(sentinel.ModeWebhook, principal, d.URL, r.Name, r.Canonical)
	if !s.endIfUnchanged(ctx, id, func(*Record) bool { return true }, "events/unsubscribe") {
		if _, _, err := s.Store.Get(ctx, id); errors.Is(err, sentinel.ErrNotFound) {
			return nil, sentinel.Errorf(sentinel.CodeSubscriptionNotFound, "no webhook subscription for this name, arguments and delivery.url")
		}
		return nil, fmt.Errorf("subscription %s changed while unsubscribing; call again", id)
	}
	return map[string]any{"resultType": "complete"}, nil
}

// verifiedKey is the bucket key caching a (principal, url) verification.
func verifiedKey(principal, url string) string {
	sum := sha256.Sum256([]byte(principal + "\x00" + url))
	return "verified." + hex.EncodeToString(sum[:12])
}

// verify confirms the endpoint's intent before any delivery: an
// allowlisted URL, a cached verification of this principal, or the
// challenge handshake (a signed verification envelope whose nonce the
// endpoint echoes in a 2xx body, compared in constant time).
func (w *Webhooks) verify(ctx context.Context, principal, subID string, d *delivery) error {
	s := w.svc
	for _, prefix := range s.Cfg.CallbackAllowlist {
		if prefix != "" && strings.HasPrefix(d.URL, prefix) {
			return nil
		}
	}
	key := verifiedKey(principal, d.URL)
	if e, err := s.Store.KV.Get(ctx, key); err == nil {
		if until, perr := strconv.ParseInt(string(e.Value()), 10, 64); perr == nil && until > s.Now().UnixMilli() {
			return nil
		}
	}
	challenge := nonce()
	body, _ := json.Marshal(map[string]string{"type": "verification", "challenge": challenge})
	res := post(ctx, w.client, d.URL, subID, controlID("verification"), []string{d.Secret}, body, s.Now())
	if res.Category != "" {
		return sentinel.Errorf(sentinel.CodeCallbackPrefix+res.Category, "the callback endpoint failed verification (%s)", res.Category)
	}
	var echo struct {
		Challenge string `json:"challenge"`
	}
	if json.Unmarshal(res.Body, &echo) != nil || subtle.ConstantTimeCompare([]byte(echo.Challenge), []byte(challenge)) != 1 {
		return sentinel.Errorf(sentinel.CodeCallbackPrefix+"challenge_failed", "the callback endpoint did not echo the challenge")
	}
	until := s.Now().Add(s.Cfg.TTLMax).UnixMilli()
	if _, err := s.Store.KV.Put(ctx, key, []byte(strconv.FormatInt(until, 10))); err != nil {
		return fmt.Errorf("cache the endpoint verification: %w", err)
	}
	return nil
}

// ensureConsumer creates the subscription's durable consumer, starting
// after the position the subscription was created at.
func (w *Webhooks) ensureConsumer(ctx context.Context, rec *Record) error {
	s := w.svc
	cfg := jetstream.ConsumerConfig{
		Durable:       bus.MCPWebhookConsumer(rec.ID),
		Description:   "MCP Events webhook deliveries of " + rec.ID,
		FilterSubject: bus.MCPFeedFilter(sentinel.ModeWebhook, rec.ID),
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:   rec.CreatedSeq + 1,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       s.Cfg.Timeout + 5*time.Second,
		MaxAckPending: 1,
		MaxDeliver:    s.Cfg.RetryAttempts,
	}
	if c, err := s.Feed.M.Feeds.Consumer(ctx, cfg.Durable); err == nil && c.CachedInfo().Config.OptStartSeq == cfg.OptStartSeq {
		return nil
	}
	if _, err := s.Feed.M.Feeds.CreateOrUpdateConsumer(ctx, cfg); err != nil {
		return fmt.Errorf("create the webhook consumer of %s: %w", rec.ID, err)
	}
	return nil
}

// watermark is the safe-to-persist position of a webhook subscription:
// every event at or before it was acknowledged or abandoned.
func (w *Webhooks) watermark(ctx context.Context, rec *Record) uint64 {
	c, err := w.svc.Feed.M.Feeds.Consumer(ctx, bus.MCPWebhookConsumer(rec.ID))
	if err != nil {
		return rec.CreatedSeq
	}
	info, err := c.Info(ctx)
	if err != nil {
		return rec.CreatedSeq
	}
	return max(info.AckFloor.Stream, rec.CreatedSeq)
}

// dropConsumer deletes an ended subscription's consumer (best effort).
func (w *Webhooks) dropConsumer(ctx context.Context, id string) {
	err := w.svc.Feed.M.Feeds.DeleteConsumer(ctx, bus.MCPWebhookConsumer(id))
	if err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
		w.svc.Log.Warn("deleting a webhook consumer failed", "subscription", id, "err", err)
	}
}

// Start watches the webhook subscriptions and runs one delivery worker
// per subscription until ctx ends.
func (w *Webhooks) Start(ctx context.Context, wg *sync.WaitGroup) error {
	watcher, err := w.svc.Store.KV.Watch(ctx, "sub.*")
	if err != nil {
		return fmt.Errorf("watch webhook subscriptions: %w", err)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer func() { _ = watcher.Stop() }()
		for {
			select {
			case <-ctx.Done():
				w.stopAll()
				return
			case e, ok := <-watcher.Updates():
				if !ok {
					w.stopAll()
					return
				}
				if e == nil {
					continue
				}
				id := strings.TrimPrefix(e.Key(), "sub.")
				if e.Operation() != jetstream.KeyValuePut {
					w.stop(id)
					continue
				}
				var rec Record
				if json.Unmarshal(e.Value(), &rec) == nil && rec.Mode == sentinel.ModeWebhook {
					w.run(ctx, wg, id)
				}
			}
		}
	}()
	return nil
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

// work pulls one subscription's consumer and delivers until ctx ends.
func (w *Webhooks) work(ctx context.Context, id string) {
	s := w.svc
	for ctx.Err() == nil {
		cons, err := s.Feed.M.Feeds.Consumer(ctx, bus.MCPWebhookConsumer(id))
		if err != nil {
			if !sleepCtx(ctx, 200*time.Millisecond) {
				return
			}
			continue
		}
		batch, err := cons.Fetch(1, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			if !sleepCtx(ctx, 200*time.Millisecond) {
				return
			}
			continue
		}
		for msg := range batch.Messages() {
			w.deliver(ctx, id, msg)
		}
	}
}

// deliver POSTs one feed event and settles its message.
func (w *Webhooks) deliver(ctx context.Context, id string, msg jetstream.Msg) {
	s := w.svc
	rec, _, err := s.Store.Get(ctx, id)
	if errors.Is(err, sentinel.ErrNotFound) || (err == nil && rec.ExpiresMs != 0 && s.Now().UnixMilli() >= rec.ExpiresMs) {
		_ = msg.Term() // the subscription ended: nothing more is delivered
		return
	}
	if err != nil {
		_ = msg.NakWithDelay(s.Cfg.RetryBackoff)
		return
	}
	meta, err := msg.Metadata()
	if err != nil {
		_ = msg.Term()
		return
	}
	var ev sentinel.Event
	if json.Unmarshal(msg.Data(), &ev) != nil {
		_ = msg.Term()
		return
	}
	occ := occurrence(rec.Name, stored{Seq: meta.Sequence.Stream, Time: meta.Timestamp, Ev: ev})
	if c, err := s.Cursors.Sign(ctx, meta.Sequence.Stream, BindOf(rec.Principal, rec.Name, rec.Arguments)); err == nil {
		occ.Cursor = &c
	}
	body, _ := json.Marshal(occ)
	secrets := rec.Secrets
	if len(secrets) > 1 && s.Now().UnixMilli() >= rec.OldSecretUntilMs {
		secrets = secrets[:1]
	}
	res := post(ctx, w.client, rec.URL, rec.ID, ev.ID, secrets, body, s.Now())
	if ctx.Err() != nil {
		return // stopping: the event is redelivered
	}
	now := sentinel.FormatTime(s.Now())
	switch {
	case res.Category == "":
		_ = msg.Ack()
		w.status(ctx, id, func(st *DeliveryStatus) {
			st.Active, st.LastDeliveryAt, st.LastError, st.FailedSince = true, &now, nil, nil
		})
		return
	case res.Status == 410 || res.Status == 413 || int(meta.NumDelivered) >= s.Cfg.RetryAttempts:
		_ = msg.Term() // final: abandoned (the watermark moves past it)
	default:
		_ = msg.NakWithDelay(backoff(s.Cfg.RetryBackoff, int(meta.NumDelivered)))
	}
	cat := res.Category
	w.status(ctx, id, func(st *DeliveryStatus) {
		st.LastError = &cat
		if st.FailedSince == nil {
			st.FailedSince = &now
		}
	})
}

// status updates a subscription's deliveryStatus (best effort).
func (w *Webhooks) status(ctx context.Context, id string, fn func(*DeliveryStatus)) {
	_, err := w.svc.Store.Update(ctx, id, func(r *Record) error { fn(&r.Status); return nil })
	if err != nil && !errors.Is(err, sentinel.ErrNotFound) {
		w.svc.Log.Warn("recording a webhook delivery status failed", "subscription", id, "err", err)
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
