package sessions

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/runtime/pause"
)

// The lifecycle outbox (issue 21, item 4). A lifecycle event (turn-end,
// exited, crashed, pr-opened, ...) is decided in the same compare-and-set
// as the registry change it reports and written into the session's record
// (Session.Pending) under a deterministic id (lc_<session>_<n>); it is then
// published with that id as Nats-Msg-Id through the bus's retrying publish
// and dropped from the record once stored. A crash, an election or a
// failed publish between the two leaves it pending: the next change of
// the session (a repeated report included) or the heartbeat sweep of any
// node publishes it again, and the stream's duplicates window
// (bus.inbox_duplicates) makes a repeat of a publish that did land a
// duplicate. Before, the publish was fire-and-forget after the write: an
// event lost there was lost for good, and a repeated report (already
// ended) published nothing.

// maxPending bounds a session's outbox: past it the oldest pending events
// are dropped (logged), so a lifecycle stream that refuses writes for long
// cannot grow a record without bound.
const maxPending = 64

// PointLifecycle is reached (key: the session id) before a session's
// pending lifecycle events are published: a Fail there is a crash or an
// election between the registry write and the publish.
const PointLifecycle pause.Point = "sessions.lifecycle"

// enqueue adds ev to s's outbox with the next id of s (inside the
// registry's compare-and-set).
func (r *Registry) enqueue(s *Session, ev LifecycleEvent) {
	if ev.Ts == "" {
		ev.Ts = sentinel.FormatTime(r.now())
	}
	s.LifecycleSeq++
	ev.ID = fmt.Sprintf("lc_%s_%d", s.ID, s.LifecycleSeq)
	s.Pending = append(s.Pending, ev)
	if over := len(s.Pending) - maxPending; over > 0 {
		r.log.Error("lifecycle outbox full; dropping the oldest pending events", "session", s.ID, "dropped", over)
		s.Pending = slices.Delete(s.Pending, 0, over)
	}
}

// flush publishes a session's pending lifecycle events in order, then
// drops the stored ones from the record. A failure leaves them (and the
// ones after) pending for the next flush.
func (r *Registry) flush(ctx context.Context, id string, pending []LifecycleEvent) {
	if len(pending) == 0 {
		return
	}
	if err := r.pause.At(ctx, PointLifecycle, id); err != nil {
		r.log.Warn("publishing lifecycle events failed; they stay pending", "session", id, "err", err)
		return
	}
	stored := map[string]bool{}
	for _, ev := range pending {
		raw, err := json.Marshal(ev)
		if err == nil {
			_, _, err = r.b.PublishRetrying(ctx, LifecycleSubject(ev.SessionID), raw, ev.ID)
		}
		if err != nil {
			r.log.Warn("publishing a lifecycle event failed; it stays pending", "session", id, "kind", ev.Kind, "event", ev.ID, "err", err)
			break
		}
		stored[ev.ID] = true
	}
	if len(stored) == 0 {
		return
	}
	_, _, err := r.mutate(ctx, id, false, func(s *Session, _ bool) error {
		n := len(s.Pending)
		s.Pending = slices.DeleteFunc(s.Pending, func(ev LifecycleEvent) bool { return stored[ev.ID] })
		if len(s.Pending) == n {
			return errSkip
		}
		return nil
	})
	if err != nil {
		r.log.Warn("clearing published lifecycle events failed; they are published again (duplicates within the window)", "session", id, "err", err)
	}
}

// FlushPending publishes what every session's outbox still holds (the
// heartbeat sweep calls it). It returns how many sessions had any.
func (r *Registry) FlushPending(ctx context.Context, all []Session) int {
	n := 0
	for _, s := range all {
		if len(s.Pending) > 0 {
			n++
			r.flush(ctx, s.ID, s.Pending)
		}
	}
	return n
}
