package journal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentproto/sentinel"
	"github.com/nats-io/nats.go/jetstream"
)

// Reader reads the journal back. Reads stream with a short-lived ordered
// consumer over the subject filter (the server's per-subject index), so a
// read costs what it matches, not the whole stream.
type Reader struct {
	Stream jetstream.Stream
}

// Limits of a read.
const (
	DefaultLimit = 50
	MaxLimit     = 1000
	// maxScan bounds the entries one read looks at.
	maxScan = 200_000
	// fetchBatch is the size of one fetch of a read.
	fetchBatch = 256
	// fetchWait bounds a fetch that finds nothing more.
	fetchWait = 500 * time.Millisecond
)

// Sentinel returns a page of a sentinel's decisions: with after 0 the
// newest limit ones, else the first limit ones after that sequence.
func (r *Reader) Sentinel(ctx context.Context, sentinelID string, limit int, after uint64) (sentinel.DecisionPage, error) {
	if limit <= 0 || limit > MaxLimit {
		limit = DefaultLimit
	}
	out := sentinel.DecisionPage{Decisions: []sentinel.Decision{}, Next: after}
	if !oneToken(sentinelID) {
		return out, nil // no sentinel id holds a dot, a wildcard or a space
	}
	filter := SentinelFilter(sentinelID)
	err := r.scanFrom(ctx, filter, after+1, func(e sentinel.Decision) bool {
		out.Decisions = append(out.Decisions, e)
		if after > 0 {
			return len(out.Decisions) < limit
		}
		if len(out.Decisions) > limit {
			out.Decisions = out.Decisions[1:]
		}
		return true
	})
	if err != nil {
		return sentinel.DecisionPage{}, err
	}
	if n := len(out.Decisions); n > 0 {
		out.Next = out.Decisions[n-1].Seq
	}
	return out, nil
}

// oneToken reports whether s is one NATS subject token.
func oneToken(s string) bool {
	return s != "" && !strings.ContainsAny(s, ".*> \t\r\n")
}

// Event returns every decision about one event, whatever sentinel made
// it, oldest first.
func (r *Reader) Event(ctx context.Context, eventID string) ([]sentinel.Decision, error) {
	out := []sentinel.Decision{}
	err := r.scanFrom(ctx, EventFilter(eventID), 1, func(e sentinel.Decision) bool {
		if e.EventID == eventID {
			out = append(out, e)
		}
		return len(out) < MaxLimit
	})
	return out, err
}

// Since calls fn with every entry stored at or after since, oldest first,
// until fn returns false. It returns the time of the first entry it read
// (zero when none).
func (r *Reader) Since(ctx context.Context, since time.Time, fn func(sentinel.Decision) bool) (time.Time, error) {
	var first time.Time
	cfg := jetstream.OrderedConsumerConfig{FilterSubjects: []string{AllSubjects},
		DeliverPolicy: jetstream.DeliverByStartTimePolicy, OptStartTime: &since}
	err := r.scan(ctx, cfg, func(e sentinel.Decision, stored time.Time) bool {
		if first.IsZero() {
			first = stored
		}
		return fn(e)
	})
	return first, err
}

// Recent calls fn with the newest entries stored at or after since, at
// most limit of them (the stream's last limit sequences, those older than
// since skipped), oldest first, until fn returns false. It returns the
// time of the first entry it passed to fn (zero when none) and whether the
// window was cut: entries at or after since were left unread.
func (r *Reader) Recent(ctx context.Context, since time.Time, limit int, fn func(sentinel.Decision) bool) (first time.Time, cut bool, err error) {
	info, err := r.Stream.Info(ctx)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("journal read: %w", err)
	}
	st := info.State
	if st.Msgs == 0 {
		return time.Time{}, false, nil
	}
	start := st.FirstSeq
	if limit > 0 && st.LastSeq >= uint64(limit) && st.LastSeq-uint64(limit)+1 > start {
		start = st.LastSeq - uint64(limit) + 1
	}
	cfg := jetstream.OrderedConsumerConfig{FilterSubjects: []string{AllSubjects},
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: start}
	err = r.scan(ctx, cfg, func(e sentinel.Decision, stored time.Time) bool {
		if stored.Before(since) {
			return true
		}
		if first.IsZero() {
			first = stored
		}
		return fn(e)
	})
	if err != nil {
		return first, false, err
	}
	// The window was cut when it starts past the stream's first entry and
	// the entry before it is recent enough to have been read.
	cut = start > st.FirstSeq && r.storedAtOrAfter(ctx, start-1, since)
	return first, cut, nil
}

// storedAtOrAfter reports whether the entry at seq was stored at or after
// since (false when it cannot be read).
func (r *Reader) storedAtOrAfter(ctx context.Context, seq uint64, since time.Time) bool {
	m, err := r.Stream.GetMsg(ctx, seq)
	if err != nil {
		return false
	}
	return !m.Time.Before(since)
}

// scanFrom reads the entries of filter from sequence from on. A probe
// (next message by subject) answers an empty range without waiting.
func (r *Reader) scanFrom(ctx context.Context, filter string, from uint64, fn func(sentinel.Decision) bool) error {
	first, err := r.Stream.GetMsg(ctx, from, jetstream.WithGetMsgSubject(filter))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("journal read: %w", err)
	}
	cfg := jetstream.OrderedConsumerConfig{FilterSubjects: []string{filter},
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: first.Sequence}
	return r.scan(ctx, cfg, func(e sentinel.Decision, _ time.Time) bool { return fn(e) })
}

// scan runs an ordered consumer until it has delivered every matching
// entry (a message's pending count reaches 0), fn returns false, nothing
// more arrives within fetchWait, or maxScan entries were read.
func (r *Reader) scan(ctx context.Context, cfg jetstream.OrderedConsumerConfig, fn func(sentinel.Decision, time.Time) bool) error {
	cfg.InactiveThreshold = 30 * time.Second
	cons, err := r.Stream.OrderedConsumer(ctx, cfg)
	if err != nil {
		return fmt.Errorf("journal read: %w", err)
	}
	defer func() {
		if info := cons.CachedInfo(); info != nil {
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
			_ = r.Stream.DeleteConsumer(dctx, info.Name)
			cancel()
		}
	}()
	for read := 0; read < maxScan; {
		batch, err := cons.Fetch(fetchBatch, jetstream.FetchMaxWait(fetchWait))
		if err != nil {
			return fmt.Errorf("journal read: %w", err)
		}
		got := 0
		for msg := range batch.Messages() {
			got++
			read++
			md, err := msg.Metadata()
			if err != nil {
				continue
			}
			var e sentinel.Decision
			if json.Unmarshal(msg.Data(), &e) == nil {
				e.Seq = md.Sequence.Stream
				if !fn(e, md.Timestamp) {
					return nil
				}
			}
			if md.NumPending == 0 {
				return nil
			}
		}
		if err := batch.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) && !errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("journal read: %w", err)
		}
		if got == 0 || ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return nil
}
