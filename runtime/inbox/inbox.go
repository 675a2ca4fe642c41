package inbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus"
	"github.com/agentproto/sentinel/runtime/metrics"
)

// Inbox reads and writes session inboxes on the bus.
type Inbox struct {
	b Bus
	s jetstream.Stream
	// metrics, when set, counts stored messages (WithMetrics).
	metrics *metrics.Metrics
}

// Append stores msg in its recipient's inbox. The message id makes it
// idempotent forever: a second Append of the same id returns the stored
// message (as it was first written, its Origin included) and dup = true.
func (i *Inbox) Append(ctx context.Context, msg sentinel.Message) (sentinel.Message, bool, error) {
	if err := Validate(&msg); err != nil {
		return sentinel.Message{}, false, err
	}
	msg.Seq = 0
	raw, err := json.Marshal(msg)
	if err != nil {
		return sentinel.Message{}, false, fmt.Errorf("encode message: %w", err)
	}
	seq, dup, err := i.b.PublishOnce(ctx, i.s, Subject(msg.To, msg.ID), raw, msg.ID)
	if err != nil {
		return sentinel.Message{}, false, fmt.Errorf("bus: publish inbox message %s: %w", msg.ID, bus.StorageCoded(err))
	}
	if !dup {
		i.metrics.Inc(func(m *metrics.Metrics) prometheus.Counter { return m.InboxMessages })
	} else if first, ok, lerr := i.Lookup(ctx, msg.To, msg.ID); lerr == nil && ok {
		return first, true, nil
	}
	msg.Seq = seq
	return msg, dup, nil
}

// Query selects messages of one session's inbox.
type Query struct {
	SessionID     string
	After         uint64 // exclusive stream sequence
	Limit         int    // default 50, max 500
	CorrelationID string
}

// Read returns up to Limit messages after Query.After, oldest first, and the
// sequence to pass as After next time. It reads with next-by-subject gets
// (no consumer to create), so a message stored before the call is always
// seen.
func (i *Inbox) Read(ctx context.Context, q Query) ([]sentinel.Message, uint64, error) {
	if q.Limit <= 0 {
		q.Limit = 50
	}
	if q.Limit > 500 {
		q.Limit = 500
	}
	next := q.After
	filter := Filter(q.SessionID)
	var out []sentinel.Message
	for len(out) < q.Limit {
		raw, err := i.s.GetMsg(ctx, next+1, jetstream.WithGetMsgSubject(filter))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			break
		}
		if err != nil {
			return nil, q.After, fmt.Errorf("inbox read: %w", bus.Retryable(err))
		}
		next = raw.Sequence
		var msg sentinel.Message
		if json.Unmarshal(raw.Data, &msg) != nil {
			continue
		}
		msg.Seq = raw.Sequence
		if q.CorrelationID != "" && msg.CorrelationID != q.CorrelationID {
			continue
		}
		out = append(out, msg)
	}
	return out, next, nil
}

// Wait returns the messages after q.After as soon as at least one matches,
// waiting up to timeout for a new one. It returns at once when a match is
// already there; an empty result means the wait timed out.
//
// A core subscription to the session's inbox subjects wakes it when a
// message lands. A message routed just before that subscription existed,
// but stored just after the first read, would wake nothing: re-reads at
// 25 ms doubling to 1 s catch it.
func (i *Inbox) Wait(ctx context.Context, q Query, timeout time.Duration) ([]sentinel.Message, uint64, error) {
	wake := make(chan struct{}, 1)
	stop, err := i.b.OnPublish(Filter(q.SessionID), func() {
		select {
		case wake <- struct{}{}:
		default:
		}
	})
	if err != nil {
		return nil, q.After, fmt.Errorf("inbox wait: %w", err)
	}
	defer stop()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	retry := 25 * time.Millisecond
	for {
		msgs, next, err := i.Read(ctx, q)
		if err != nil || len(msgs) > 0 {
			return msgs, next, err
		}
		q.After = next
		again := time.NewTimer(retry)
		select {
		case <-wake:
		case <-again.C:
			if retry < time.Second {
				retry *= 2
			}
		case <-deadline.C:
			again.Stop()
			return nil, q.After, nil
		case <-ctx.Done():
			again.Stop()
			return nil, q.After, context.Cause(ctx)
		}
		again.Stop()
	}
}

// Subscribe calls fn for every message stored in a session's inbox from now
// on (core NATS fan-out of the stream's subjects; used to wake SSE streams
// and notify hooks). The returned function unsubscribes.
func (i *Inbox) Subscribe(sessionID string, fn func()) (func(), error) {
	subj := Filter(sessionID)
	if sessionID == "" {
		subj = AllSubjects
	}
	stop, err := i.b.OnPublish(subj, fn)
	if err != nil {
		return nil, fmt.Errorf("inbox subscribe: %w", err)
	}
	return stop, nil
}

// Depth is how many messages the inbox stream holds (every session's).
func (i *Inbox) Depth(ctx context.Context) (uint64, error) {
	info, err := i.s.Info(ctx)
	if err != nil {
		return 0, fmt.Errorf("inbox depth: %w", err)
	}
	return info.State.Msgs, nil
}
