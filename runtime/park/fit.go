package park

import (
	"encoding/json"
	"fmt"

	"github.com/agentproto/sentinel"
)

// TrimmedNote ends the reason of a record trimmed to fit the max payload.
const TrimmedNote = " (parked record trimmed to fit the bus's max payload)"

// Stub limits of a trimmed record.
const (
	clipID     = 256
	clipType   = 256
	clipSubj   = 512
	clipReason = 4096
	clipText   = 16 << 10
)

// Fit encodes rec in at most max bytes, trimming it step by step when it
// is larger: first the event's data projection (replaced by
// {"truncated":true}), its summary and the item (a string item is clipped,
// any other becomes null) and text; then the event becomes an identity
// stub (id, type, subject) and the reason is clipped. A trimmed record's
// reason ends with TrimmedNote. Only a max too small for the stub itself
// is an error.
func Fit(rec sentinel.Parked, max int) ([]byte, error) {
	raw, err := json.Marshal(rec)
	if err != nil {
		return nil, fmt.Errorf("park: encode: %w", err)
	}
	if len(raw) <= max {
		return raw, nil
	}
	rec.Reason += TrimmedNote
	if rec.Event != nil {
		ev := *rec.Event
		ev.Data = json.RawMessage(`{"truncated":true}`)
		ev.Summary = sentinel.ClipUTF8(ev.Summary, sentinel.MaxSummaryBytes)
		rec.Event = &ev
	}
	if s, ok := rec.Item.(string); ok {
		rec.Item = sentinel.ClipUTF8(s, clipText)
	} else if rec.Item != nil {
		rec.Item = nil
	}
	rec.Text = sentinel.ClipUTF8(rec.Text, clipText)
	if raw, err = json.Marshal(rec); err == nil && len(raw) <= max {
		return raw, nil
	}
	if rec.Event != nil {
		e := rec.Event
		rec.Event = &sentinel.Event{
			SpecVersion: e.SpecVersion,
			ID:          sentinel.ClipUTF8(e.ID, clipID),
			Type:        sentinel.ClipUTF8(e.Type, clipType),
			Subject:     sentinel.ClipUTF8(e.Subject, clipSubj),
			Data:        json.RawMessage(`{"truncated":true}`),
		}
	}
	rec.Item, rec.Text = nil, ""
	rec.Reason = sentinel.ClipUTF8(rec.Reason[:len(rec.Reason)-len(TrimmedNote)], clipReason) + TrimmedNote
	rec.SentinelID = sentinel.ClipUTF8(rec.SentinelID, clipID)
	rec.FollowID = sentinel.ClipUTF8(rec.FollowID, clipID)
	rec.Follower = sentinel.ClipUTF8(rec.Follower, clipID)
	raw, err = json.Marshal(rec)
	if err != nil {
		return nil, fmt.Errorf("park: encode: %w", err)
	}
	if len(raw) > max {
		return nil, fmt.Errorf("park: a trimmed record is %d bytes, more than the %d allowed", len(raw), max)
	}
	return raw, nil
}
