package agentpush

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
)

// MaxPollLimit is the largest page the events endpoint serves.
const MaxPollLimit = 1000

// eventsPage is the GET .../events response; its cursor field is ignored.
type eventsPage struct {
	Items []json.RawMessage `json:"items"`
}

// item is one queued delivery.
type item struct {
	DeliveryID string          `json:"delivery_id"`
	Seq        *int64          `json:"seq"`
	Status     string          `json:"status"`
	Envelope   json.RawMessage `json:"envelope"`
}

// Poll implements providers.Poller: the queued events after h.Cursor (a
// decimal seq, "0" at create), oldest first. Each envelope is validated
// field by field and passed through unchanged with its seq; an item that
// cannot be parsed is reported as Malformed (never its data) so the runtime
// parks it before the cursor moves past it. The new cursor is the largest
// seq seen, poison items included. Push handles poll nothing.
func (p *Provider) Poll(ctx context.Context, h sentinel.Handle, limit int) (providers.PollResult, error) {
	res := providers.PollResult{Cursor: h.Cursor}
	if h.StateString(stateMode) == providers.ModePush {
		return res, nil
	}
	if h.RemoteID == "" {
		return res, providers.SetupError("agentpush handle has no subscription id — re-create the sentinel")
	}
	after, err := parseCursor(h.Cursor)
	if err != nil {
		return res, err
	}
	res.Cursor = strconv.FormatInt(after, 10)
	c, _, err := p.client(ctx)
	if err != nil {
		return res, err
	}
	limit = min(max(limit, 1), MaxPollLimit)
	path := fmt.Sprintf("%s?after=%d&limit=%d", subscriptionPath(h.RemoteID, "/events"), after, limit)
	var page eventsPage
	if err := c.do(ctx, http.MethodGet, path, nil, &page); err != nil {
		return res, err
	}
	maxSeq := after
	for _, raw := range page.Items {
		ev, seq, bad := parseItem(raw)
		if seq != nil && *seq > maxSeq {
			maxSeq = *seq
		}
		if bad != nil {
			res.Malformed = append(res.Malformed, *bad)
			continue
		}
		res.Events = append(res.Events, ev)
	}
	if len(res.Malformed) > 0 {
		p.cfg.Log.WarnContext(ctx, "agentpush items failed validation",
			"subscription", h.RemoteID, "count", len(res.Malformed))
	}
	res.Cursor = strconv.FormatInt(maxSeq, 10)
	return res, nil
}

// parseItem turns one raw item into an event, or reports it as malformed
// with its seq, delivery id, the validation error, a sha256 digest and its
// size. It also returns the item's seq (the queue position the cursor
// moves by); the event's own seq is the envelope's, else the item's.
func parseItem(raw json.RawMessage) (sentinel.Event, *int64, *providers.Malformed) {
	var it item
	if err := json.Unmarshal(raw, &it); err != nil {
		return sentinel.Event{}, nil, malformed(raw, item{}, "item is not a delivery object")
	}
	ev, err := sentinel.ParseEnvelope(it.Envelope, it.Seq)
	if err != nil {
		return sentinel.Event{}, it.Seq, malformed(raw, it, err.Error())
	}
	return ev, it.Seq, nil
}

// malformed builds the quarantine record of a raw item.
func malformed(raw json.RawMessage, it item, msg string) *providers.Malformed {
	sum := sha256.Sum256(raw)
	return &providers.Malformed{
		Seq:              it.Seq,
		RemoteDeliveryID: it.DeliveryID,
		Error:            msg,
		Digest:           hex.EncodeToString(sum[:]),
		Bytes:            len(raw),
	}
}

// Ack implements providers.Poller: POST .../ack {upToSeq} once every item
// up to cursor is durably handled. h is the handle the batch was polled
// with; nothing is sent for push handles, for a cursor that is not a
// positive integer, or when the cursor does not advance past h.Cursor (an
// empty tick).
func (p *Provider) Ack(ctx context.Context, h sentinel.Handle, cursor string) error {
	if h.StateString(stateMode) == providers.ModePush {
		return nil
	}
	upTo, err := strconv.ParseInt(cursor, 10, 64)
	if err != nil || upTo <= 0 {
		return nil
	}
	if prev, err := parseCursor(h.Cursor); err == nil && prev >= upTo {
		return nil
	}
	c, _, err := p.client(ctx)
	if err != nil {
		return err
	}
	return c.do(ctx, http.MethodPost, subscriptionPath(h.RemoteID, "/ack"), map[string]int64{"upToSeq": upTo}, nil)
}

// parseCursor reads a seq cursor; "" is 0.
func parseCursor(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, providers.SetupError("agentpush cursor %q is not a sequence number", s)
	}
	return n, nil
}
