package deliver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus"
	"github.com/agentproto/sentinel/runtime/inbox"
	"github.com/agentproto/sentinel/runtime/pause"
)

// BatchBucket is the KV bucket of held digests (a sentinel's batchMs,
// issue 29 part 4): one key per (sentinel, subject),
// <sentinelId>.<subjectDigest>, holding the events of the open window, and
// the ids of the last flushed ones (so a redelivery after the flush is not
// held again). A key lives a day after its last write.
const BatchBucket = "sentinel_batches"

// BatchConfig is the digest bucket's config. This package owns it; bus
// only provisions it.
func BatchConfig() jetstream.KeyValueConfig {
	return jetstream.KeyValueConfig{
		Bucket:      BatchBucket,
		Description: "sentinel: events held for a sentinel's digest (batchMs)",
		History:     1,
		TTL:         24 * time.Hour,
	}
}

// Digest limits: a window holding MaxBatchEvents events is flushed at once;
// the ids of the last keptFlushed flushed events are kept.
const (
	MaxBatchEvents = 200
	keptFlushed    = 512
)

// Batches holds the events of sentinels with a batchMs in KV until their
// window ends, then stores them as one inbox message (the digest). Every
// step is a compare-and-set on the window's key: a flush first seals the
// window (its events are fixed from then on), then appends the digest
// under an id derived from the window (sentinel, subject's first event), then
// opens the key again. Any node that finds a sealed window completes it;
// a second append of one digest is a duplicate in the inbox. So a node
// lost at any step loses nothing and shows nothing twice, and every node
// may run the flusher (FlushDue).
type Batches struct {
	kv  *bus.KV
	raw jetstream.KeyValue
	add inbox.AppendFunc
	now func() time.Time
	log *slog.Logger
	// pause holds PointDigestSealed (tests; nil in production).
	pause *pause.Points
}

// BatchesOption sets one of the batches' optional settings.
type BatchesOption func(*Batches)

// WithBatchesClock reads the time from now (default time.Now).
func WithBatchesClock(now func() time.Time) BatchesOption { return func(b *Batches) { b.now = now } }

// WithBatchesLogger logs failed flushes to l (default: discard).
func WithBatchesLogger(l *slog.Logger) BatchesOption { return func(b *Batches) { b.log = l } }

// WithBatchesPause holds the batches at PointDigestSealed (tests).
func WithBatchesPause(p *pause.Points) BatchesOption { return func(b *Batches) { b.pause = p } }

// OpenBatches provisions the bucket (idempotent) and returns the batches,
// appending digests with add.
func OpenBatches(ctx context.Context, b bus.Provisioner, add inbox.AppendFunc, opts ...BatchesOption) (*Batches, error) {
	kv, err := b.EnsureKeyValue(ctx, BatchConfig())
	if err != nil {
		return nil, err
	}
	bs := &Batches{kv: bus.NewKV(kv), raw: kv, add: add}
	for _, o := range opts {
		o(bs)
	}
	if bs.now == nil {
		bs.now = time.Now
	}
	if bs.log == nil {
		bs.log = slog.New(slog.DiscardHandler)
	}
	return bs, nil
}

// batchItem is one held event, as the digest lists it, with the facts its
// state line reads.
type batchItem struct {
	ID         string           `json:"id"`
	Type       string           `json:"type"`
	Subject    string           `json:"subject"`
	Summary    string           `json:"summary"`
	Time       string           `json:"time,omitempty"`
	Urgency    sentinel.Urgency `json:"urgency"`
	Terminal   bool             `json:"terminal,omitempty"`
	Check      string           `json:"check,omitempty"`
	Conclusion string           `json:"conclusion,omitempty"`
	Checks     []checkFact      `json:"checks,omitempty"`
	SHA        string           `json:"sha,omitempty"`
	Review     string           `json:"review,omitempty"`
	Reviewer   string           `json:"reviewer,omitempty"`
}

type checkFact struct {
	Name       string `json:"name"`
	Conclusion string `json:"conclusion"`
}

// batchState is one window's key.
type batchState struct {
	SentinelID string      `json:"sentinelId"`
	Provider   string      `json:"provider,omitempty"`
	To         string      `json:"to"`
	Subject    string      `json:"subject"`
	BatchID    string      `json:"batchId,omitempty"`
	Deadline   int64       `json:"deadline,omitempty"`
	Sealed     bool        `json:"sealed,omitempty"`
	Items      []batchItem `json:"items,omitempty"`
	Flushed    []string    `json:"flushed,omitempty"`
}

func (s *batchState) has(id string) bool {
	for _, it := range s.Items {
		if it.ID == id {
			return true
		}
	}
	return slices.Contains(s.Flushed, id)
}

// BatchKey is the key of a sentinel's window for one subject.
func BatchKey(sentinelID, subject string) string {
	sum := sha256.Sum256([]byte(subject))
	return sentinelID + "." + hex.EncodeToString(sum[:16])
}

// DigestID is the inbox message id of a window's digest.
func DigestID(to, sentinelID, batchID string) string {
	return inbox.DeterministicID("sentinel-digest", to, sentinelID, batchID)
}

func (b *Batches) get(ctx context.Context, key string) (batchState, uint64, error) {
	raw, rev, err := b.kv.Get(ctx, key)
	if errors.Is(err, sentinel.ErrNotFound) {
		return batchState{}, 0, nil
	}
	if err != nil {
		return batchState{}, 0, bus.Retryable(err)
	}
	var st batchState
	if err := json.Unmarshal(raw, &st); err != nil {
		return batchState{}, 0, fmt.Errorf("digest window %s: %w", key, err)
	}
	return st, rev, nil
}

// put writes st at key with a compare-and-set on rev (0: create).
func (b *Batches) put(ctx context.Context, key string, st *batchState, rev uint64) (uint64, error) {
	raw, err := json.Marshal(st)
	if err != nil {
		return 0, err
	}
	if rev == 0 {
		return b.kv.Create(ctx, key, raw)
	}
	return b.kv.Update(ctx, key, raw, rev)
}

const casAttempts = 32

// Hold adds ev (of rec, whose Spec.BatchMs > 0) to its subject's window,
// opening one that ends batchMs from now: Held, or Duplicate when the
// window (or a recent flush) already has it. A sealed window found on the
// way is completed first.
func (b *Batches) Hold(ctx context.Context, rec *sentinel.Sentinel, ev *sentinel.Event) (Outcome, error) {
	key := BatchKey(rec.ID, ev.Subject)
	item := itemOf(ev, rec.Spec.Target.Urgency)
	for range casAttempts {
		st, rev, err := b.get(ctx, key)
		if err != nil {
			return Outcome{}, err
		}
		if st.Sealed {
			if err := b.complete(ctx, key, st, rev); err != nil {
				return Outcome{}, err
			}
			continue
		}
		if st.has(ev.ID) {
			return Outcome{Duplicate: true, Held: true}, nil
		}
		if len(st.Items) == 0 {
			st.SentinelID, st.Provider, st.To, st.Subject = rec.ID, rec.Provider, rec.Spec.Target.SessionID, ev.Subject
			st.BatchID = ev.ID
			st.Deadline = b.now().Add(time.Duration(rec.Spec.BatchMs) * time.Millisecond).UnixMilli()
		}
		st.Items = append(st.Items, item)
		full := len(st.Items) >= MaxBatchEvents
		st.Sealed = full
		nrev, err := b.put(ctx, key, &st, rev)
		if errors.Is(err, sentinel.ErrConflict) {
			continue
		}
		if err != nil {
			return Outcome{}, bus.Retryable(err)
		}
		if full {
			if err := b.complete(ctx, key, st, nrev); err != nil {
				return Outcome{}, err
			}
		}
		return Outcome{Held: true}, nil
	}
	return Outcome{}, fmt.Errorf("digest window %s: %w", key, sentinel.ErrConflict)
}

// Flush seals the window at key and stores its digest now (nothing for an
// empty or missing window).
func (b *Batches) Flush(ctx context.Context, key string) error {
	for range casAttempts {
		st, rev, err := b.get(ctx, key)
		if err != nil {
			return err
		}
		if rev == 0 || len(st.Items) == 0 {
			return nil
		}
		if !st.Sealed {
			st.Sealed = true
			nrev, err := b.put(ctx, key, &st, rev)
			if errors.Is(err, sentinel.ErrConflict) {
				continue
			}
			if err != nil {
				return bus.Retryable(err)
			}
			rev = nrev
			if err := b.pause.At(ctx, PointDigestSealed, key); err != nil {
				return err
			}
		}
		return b.complete(ctx, key, st, rev)
	}
	return fmt.Errorf("digest window %s: %w", key, sentinel.ErrConflict)
}

// FlushSubject flushes rec's window of subject (a terminal event's, before
// its own message).
func (b *Batches) FlushSubject(ctx context.Context, sentinelID, subject string) error {
	return b.Flush(ctx, BatchKey(sentinelID, subject))
}

// complete stores the digest of a sealed window (idempotent) and opens
// the key again with the window's ids among the flushed. A compare-and-set
// lost here means another node completed it.
func (b *Batches) complete(ctx context.Context, key string, st batchState, rev uint64) error {
	if len(st.Items) > 0 {
		msg := DigestMessage(&st, sentinel.FormatTime(b.now()))
		if err := b.appendDigest(ctx, msg); err != nil {
			return fmt.Errorf("digest %s: %w", msg.ID, err)
		}
	}
	next := batchState{SentinelID: st.SentinelID, Provider: st.Provider, To: st.To, Subject: st.Subject, Flushed: st.Flushed}
	for _, it := range st.Items {
		next.Flushed = append(next.Flushed, it.ID)
	}
	if n := len(next.Flushed); n > keptFlushed {
		next.Flushed = next.Flushed[n-keptFlushed:]
	}
	_, err := b.put(ctx, key, &next, rev)
	if err != nil && !errors.Is(err, sentinel.ErrConflict) {
		return bus.Retryable(err)
	}
	return nil
}

// errDupInProcess is JetStream's answer to a publish whose message id
// another publish of the same id is storing right now (two nodes flushing
// one window at once): the other one lands it; asked again, it is a
// duplicate.
const errDupInProcess = 10158

// appendDigest stores msg, asking again (up to 5 times, 20 ms apart) while
// another node's store of the same digest is in process.
func (b *Batches) appendDigest(ctx context.Context, msg sentinel.Message) error {
	for i := 0; ; i++ {
		_, _, err := b.add(ctx, msg)
		var apiErr *jetstream.APIError
		if err == nil || i == 4 || !errors.As(err, &apiErr) || apiErr.ErrorCode != errDupInProcess {
			return err
		}
		t := time.NewTimer(20 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// FlushDue flushes every window whose end has come (or that is sealed, a
// flush cut short) and returns how many it flushed.
func (b *Batches) FlushDue(ctx context.Context) (int, error) {
	keys, err := b.kv.Keys(ctx)
	if err != nil {
		return 0, bus.Retryable(err)
	}
	now := b.now().UnixMilli()
	n := 0
	var first error
	for _, k := range keys {
		st, rev, err := b.get(ctx, k)
		if err == nil && rev != 0 && len(st.Items) > 0 && (st.Sealed || now >= st.Deadline) {
			err = b.Flush(ctx, k)
			if err == nil {
				n++
			}
		}
		if err != nil && first == nil {
			first = err
		}
	}
	return n, first
}

// Run calls FlushDue every interval until ctx ends.
func (b *Batches) Run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if _, err := b.FlushDue(ctx); err != nil && ctx.Err() == nil {
			b.log.Warn("digest flush failed (retried next tick)", "err", err)
		}
	}
}

// flushBeforeTerminal flushes the subject's window of a routed terminal
// event (one the direct path does not take: a target to resume, forward
// or park), so it is never held back there either.
func (p *Pipeline) flushBeforeTerminal(ctx context.Context, rec *sentinel.Sentinel, ev *sentinel.Event) error {
	if p.batches == nil || rec.Spec.BatchMs <= 0 || !ev.Terminal {
		return nil
	}
	return p.batches.FlushSubject(ctx, rec.ID, ev.Subject)
}

// batched wraps a Send of rec's event ev when rec has a digest window:
// a non-terminal event to a session is held; a terminal one flushes the
// subject's window first and is then sent as it is (never held back).
func (p *Pipeline) batched(rec *sentinel.Sentinel, ev *sentinel.Event, send Send) Send {
	if p.batches == nil || rec.Spec.BatchMs <= 0 || rec.Spec.Target.Kind != sentinel.TargetSession {
		return send
	}
	b := p.batches
	if ev.Terminal {
		id, subject := rec.ID, ev.Subject
		return func(ctx context.Context) (Outcome, error) {
			if err := b.FlushSubject(ctx, id, subject); err != nil {
				return Outcome{}, err
			}
			return send(ctx)
		}
	}
	cp := *rec // the Send must not read the record the pipeline writes meanwhile
	return func(ctx context.Context) (Outcome, error) { return b.Hold(ctx, &cp, ev) }
}
