package sessions

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentproto/sentinel"
)

// Retention of what the sessions keep (issue 21, item 10): before, ended
// sessions and inbox read cursors were never pruned.
const (
	// EndedRetention is how long an ended session's row is kept after its
	// last activity (90 days). A pruned row is as if never registered: a
	// sentinel still targeting it delivers to its inbox as to an unknown
	// session (no resume hook, no parking), and its lifecycle history is
	// gone from the registry.
	EndedRetention = 90 * 24 * time.Hour
	// PruneEvery is how often the prune runs (hourly; runtime/app).
	PruneEvery = time.Hour
)

// PruneEnded deletes the rows of sessions ended (or forgotten) whose last
// activity and end are older than retention and whose lifecycle outbox is empty,
// each with a compare on the revision read (a session revived meanwhile
// stays). It returns how many it deleted.
func (r *Registry) PruneEnded(ctx context.Context, retention time.Duration) (int, error) {
	lister, err := r.kv.ListKeys(ctx)
	if err != nil {
		return 0, fmt.Errorf("list sessions: %w", err)
	}
	var keys []string
	for k := range lister.Keys() {
		keys = append(keys, k)
	}
	cutoff := r.now().Add(-retention).UnixMilli()
	n := 0
	for _, id := range keys {
		s, rev, err := r.get(ctx, id)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return n, err
		}
		v := s.Effective(r.now())
		if v.Status != sentinel.SessionEnded || max(s.LastSeenTs, s.EndedTs) > cutoff || len(s.Pending) > 0 {
			continue
		}
		if err := r.kv.Delete(ctx, id, jetstream.LastRevision(rev)); err != nil {
			if errors.Is(err, jetstream.ErrKeyExists) || errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
				continue
			}
			return n, fmt.Errorf("prune session %s: %w", id, err)
		}
		n++
	}
	return n, nil
}

// PruneCursors deletes the inbox read cursors not advanced for longer than
// maxAge (bus.inbox_max_age): every message at or before such a cursor is
// older than maxAge, so the inbox no longer holds it, and a read from the
// start shows the same page the cursor would. It returns how many it
// deleted. now is the wall clock (the cursors' write times are the
// server's).
func (s *Inboxes) PruneCursors(ctx context.Context, now time.Time, maxAge time.Duration) (int, error) {
	lister, err := s.cursors.ListKeysFiltered(ctx, "inbox.>")
	if err != nil {
		if errors.Is(err, jetstream.ErrNoKeysFound) {
			return 0, nil
		}
		return 0, fmt.Errorf("list inbox cursors: %w", err)
	}
	var keys []string
	for k := range lister.Keys() {
		keys = append(keys, k)
	}
	cutoff := now.Add(-maxAge)
	n := 0
	for _, k := range keys {
		e, err := s.cursors.Get(ctx, k)
		if err != nil || !e.Created().Before(cutoff) {
			continue
		}
		if err := s.cursors.Delete(ctx, k, jetstream.LastRevision(e.Revision())); err == nil {
			n++
		}
	}
	return n, nil
}
