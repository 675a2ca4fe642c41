// Package park journals what could not be delivered (an event for a dead
// target, post-mortem noise, a malformed provider item, a follow digest) on
// the parked stream. Nothing reads it back automatically: it is a
// diagnostic record listed by GET /parked and `sentinel parked`.
package park

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentproto/sentinel"
)

// Store writes and lists parked records (Open returns it).
type Store struct {
	b   Bus
	s   jetstream.Stream
	now func() time.Time
}

// Timeout bounds one Park. Parking runs on a fresh context derived from
// the caller's (its values, not its cancellation): it is how an event that
// ran out of time or attempts is settled, so it must not fail because the
// caller's deadline passed.
const Timeout = 10 * time.Second

// Park appends a record under the id (a sentinel or follow id) and waits
// for it to be stored, bounded by Timeout whatever ctx's deadline. A record
// larger than the bus's max payload is trimmed to fit (see Fit) rather
// than refused. msgID, when set, deduplicates a re-park inside the
// stream's window.
func (j *Store) Park(ctx context.Context, id string, rec sentinel.Parked, msgID string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), Timeout)
	defer cancel()
	if rec.Ts == "" {
		rec.Ts = sentinel.FormatTime(j.now())
	}
	rec.Seq, rec.ID = 0, ""
	raw, err := Fit(rec, j.maxRecord())
	if err != nil {
		return err
	}
	if _, err := j.b.Publish(ctx, Subject(id), raw, msgID); err != nil {
		return fmt.Errorf("park: %w", err)
	}
	return nil
}

// headerRoom is what a parked record leaves of the max payload for the
// subject and headers (Nats-Msg-Id).
const headerRoom = 1024

// maxRecord is the largest encoded record the bus accepts.
func (j *Store) maxRecord() int {
	limit := int64(1 << 20) // the server's default max payload
	if mp := j.b.MaxPayload(); mp > 0 {
		limit = mp
	}
	return int(limit) - headerRoom
}

// List returns up to limit parked records, newest last; id filters to one
// sentinel or follow id when non-empty.
func (j *Store) List(ctx context.Context, id string, limit int) ([]sentinel.Parked, error) {
	if limit <= 0 || limit > 1000 {
		limit = 100
	}
	filter := AllSubjects
	if id != "" {
		filter = Subject(id)
	}
	// Keep the newest limit records, reading with next-by-subject gets.
	var out []sentinel.Parked
	for seq := uint64(1); ; {
		raw, err := j.s.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(filter))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("parked read: %w", err)
		}
		seq = raw.Sequence + 1
		var r sentinel.Parked
		if json.Unmarshal(raw.Data, &r) != nil {
			continue
		}
		r.Seq, r.ID = raw.Sequence, ParkID(raw.Sequence)
		out = append(out, r)
		if len(out) > limit {
			out = out[1:]
		}
	}
	if out == nil {
		out = []sentinel.Parked{}
	}
	return out, nil
}
