package park

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentproto/sentinel"
)

// idPrefix starts every parked record id.
const idPrefix = "prk_"

// ParkID is the stable id of the parked record stored at a stream
// sequence: the same on every node (a replicated stream has one sequence
// space) and for as long as the record is kept.
func ParkID(seq uint64) string { return idPrefix + strconv.FormatUint(seq, 10) }

// ErrNotFound matches (errors.Is, by code) what Get returns for an id that names no parked
// record (malformed, aged out, or another stream's message).
var ErrNotFound = sentinel.Errorf(sentinel.CodeParkedNotFound, "parked record not found")

// Get returns the parked record with the id.
func (j *Store) Get(ctx context.Context, id string) (sentinel.Parked, error) {
	n, err := strconv.ParseUint(strings.TrimPrefix(id, idPrefix), 10, 64)
	if !strings.HasPrefix(id, idPrefix) || err != nil || n == 0 {
		return sentinel.Parked{}, sentinel.Errorf(sentinel.CodeParkedNotFound, "%q is not a parked record id (prk_<n>, see GET /parked)", id)
	}
	raw, err := j.s.GetMsg(ctx, n)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return sentinel.Parked{}, sentinel.Errorf(sentinel.CodeParkedNotFound, "no parked record %s (aged out, or never parked)", id)
	}
	if err != nil {
		return sentinel.Parked{}, fmt.Errorf("parked read: %w", err)
	}
	if !strings.HasPrefix(raw.Subject, strings.TrimSuffix(AllSubjects, "*")) {
		return sentinel.Parked{}, sentinel.Errorf(sentinel.CodeParkedNotFound, "no parked record %s", id)
	}
	var r sentinel.Parked
	if err := json.Unmarshal(raw.Data, &r); err != nil {
		return sentinel.Parked{}, sentinel.Errorf(sentinel.CodeParkedNotFound, "parked record %s is not readable", id)
	}
	r.Seq, r.ID = raw.Sequence, ParkID(raw.Sequence)
	return r, nil
}
