package subscriptions

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/agentproto/sentinel"
)

// secretGrace is how long deliveries stay signed with a replaced secret
// too (dual signing while the client rotates).
const secretGrace = 5 * time.Minute

type delivery struct {
	Mode   string `json:"mode"`
	URL    string `json:"url"`
	Secret string `json:"secret"`
}

type webhookParams struct {
	subParams
	Delivery *delivery `json:"delivery"`
	// TTLMs is absent (the server default), null (no expiry asked) or a
	// number of milliseconds.
	TTLMs json.RawMessage `json:"ttlMs"`
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
func (s *Service) webhookRequest(ctx context.Context, principal string, raw json.RawMessage, subscribe bool) (*resolved, *delivery, json.RawMessage, error) {
	if s.webhooks == nil {
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
	if _, err := checkCallback(p.Delivery.URL, s.cfg.AllowPrivateCallbacks); err != nil {
		return nil, nil, nil, err
	}
	if subscribe {
		if _, err := checkSecret(p.Delivery.Secret); err != nil {
			return nil, nil, nil, err
		}
	}
	return r, p.Delivery, p.TTLMs, nil
}

// grant returns the TTL granted for a suggestion, 0 meaning no expiry.
// An absent ttlMs gets the default; a number is clamped to
// ttl_min..ttl_max (the SEP's floor and the server's cap: a clamp is not
// an error); an explicit null asks for no expiry, granted only with
// mcp_events.no_expiry (else the cap answers it, a finite grant the
// client treats like any other). A ttlMs that is neither is InvalidParams.
func (s *Service) grant(ttl json.RawMessage) (time.Duration, error) {
	ttl = bytes.TrimSpace(ttl)
	switch {
	case len(ttl) == 0:
		return s.cfg.TTLDefault, nil
	case bytes.Equal(ttl, []byte("null")):
		if s.cfg.NoExpiry {
			return 0, nil
		}
		return s.cfg.TTLMax, nil
	}
	var ms json.Number
	if err := json.Unmarshal(ttl, &ms); err != nil {
		return 0, sentinel.Errorf(sentinel.CodeInvalidInput, "ttlMs must be an integer number of milliseconds or null")
	}
	n, err := ms.Int64()
	if err != nil {
		return 0, sentinel.Errorf(sentinel.CodeInvalidInput, "ttlMs must be an integer number of milliseconds or null")
	}
	d := s.cfg.TTLMax
	if n < s.cfg.TTLMax.Milliseconds() {
		d = time.Duration(n) * time.Millisecond
	}
	return min(max(d, s.cfg.TTLMin), s.cfg.TTLMax), nil
}

// Subscribe answers events/subscribe: it verifies the endpoint (challenge
// handshake, unless the URL is allowlisted or was verified for this
// principal), creates or refreshes the subscription and grants a TTL.
//
// A new subscription with a cursor replays the feed after it (what an
// earlier incarnation of the same key stored), truncated when events may
// have been missed meanwhile; on a live subscription the cursor is a
// no-op (delivery continues where it is). A refresh reactivates a
// suspended subscription.
func (s *Service) Subscribe(ctx context.Context, principal string, raw json.RawMessage) (any, error) {
	r, d, ttlRaw, err := s.webhookRequest(ctx, principal, raw, true)
	if err != nil {
		return nil, err
	}
	ttl, err := s.grant(ttlRaw)
	if err != nil {
		return nil, err
	}
	id := SubscriptionID(sentinel.ModeWebhook, principal, d.URL, r.Name, r.Canonical)
	now := s.now()
	var expiresMs int64
	if ttl > 0 {
		expiresMs = now.Add(ttl).UnixMilli()
	}
	_, _, gerr := s.store.Get(ctx, id)
	existed := gerr == nil
	if errors.Is(gerr, sentinel.ErrNotFound) {
		if err := s.webhooks.verify(ctx, principal, id, d); err != nil {
			return nil, err
		}
	} else if gerr != nil {
		return nil, gerr
	}
	first, _, err := s.feed.Head(ctx)
	if err != nil {
		return nil, err
	}
	var (
		truncated bool
		status    DeliveryStatus // as it was before this refresh
	)
	rec, _, err := s.ensure(ctx, &Record{ID: id, Mode: sentinel.ModeWebhook, Name: r.Name, Arguments: r.Canonical, Principal: principal, URL: d.URL}, r,
		func(rec *Record) {
			if len(rec.Secrets) > 0 && rec.Secrets[0] != d.Secret {
				rec.Secrets = []string{d.Secret, rec.Secrets[0]}
				rec.OldSecretUntilMs = now.Add(secretGrace).UnixMilli()
			} else if len(rec.Secrets) == 0 {
				rec.Secrets = []string{d.Secret}
			}
			rec.ExpiresMs = expiresMs
			status = rec.Status
			if !rec.Status.Active {
				rec.Status.Active, rec.SuspendedMs, rec.Stats = true, 0, Stats{}
			}
			if rec.SentinelID == "" { // a new record: delivery starts here
				rec.StartSeq, truncated = rec.CreatedSeq, false
				if r.hasCursor {
					rec.StartSeq, truncated = startOf(r.after, rec.CreatedSeq, first, rec.CreatedSeq)
				}
				rec.SettledSeq = rec.StartSeq
			}
		})
	if err != nil {
		return nil, err
	}
	if err := s.webhooks.ensureConsumer(ctx, rec, !existed); err != nil {
		return nil, err
	}
	res := SubscribeResult{ResultType: "complete", ID: id, Truncated: truncated && !existed}
	if expiresMs != 0 {
		rb := sentinel.FormatTime(time.UnixMilli(expiresMs))
		res.RefreshBefore = &rb
	}
	pos := rec.StartSeq
	if existed {
		pos = s.webhooks.watermark(ctx, rec)
		res.DeliveryStatus = &status
	}
	c, err := s.cursors.Sign(ctx, pos, r.bind)
	if err != nil {
		return nil, err
	}
	res.Cursor = &c
	return res, nil
}

// Unsubscribe answers events/unsubscribe: it ends the subscription of the
// key at once (NotFound {kind: subscription} when there is none). No
// terminated envelope follows: the client asked.
func (s *Service) Unsubscribe(ctx context.Context, principal string, raw json.RawMessage) (any, error) {
	r, d, _, err := s.webhookRequest(ctx, principal, raw, false)
	if err != nil {
		return nil, err
	}
	id := SubscriptionID(sentinel.ModeWebhook, principal, d.URL, r.Name, r.Canonical)
	// The record's delivery worker writes it after every POST (stats,
	// deliveryStatus), so the delete at the revision read can meet a newer
	// one: read it again and delete that, a few times.
	for range unsubscribeAttempts {
		if s.endIfUnchanged(ctx, id, func(*Record) bool { return true }, "events/unsubscribe", nil) {
			return map[string]any{"resultType": "complete"}, nil
		}
		if _, _, err := s.store.Get(ctx, id); errors.Is(err, sentinel.ErrNotFound) {
			return nil, sentinel.Errorf(sentinel.CodeSubscriptionNotFound, "no webhook subscription for this name, arguments and delivery.url")
		}
	}
	return nil, fmt.Errorf("subscription %s changed while unsubscribing %d times; call again", id, unsubscribeAttempts)
}

// unsubscribeAttempts bounds Unsubscribe's deletes that meet a newer
// revision of the record.
const unsubscribeAttempts = 5
