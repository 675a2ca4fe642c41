package subscriptions

import (
	"context"
	"encoding/json"
)

// The SEP's JSON-RPC codes a terminated envelope carries.
const (
	rpcNotFound              = -32023
	rpcCallbackEndpointError = -32027
)

// termination is the error of a terminated envelope.
type termination struct {
	Code    int            `json:"code"`
	Message string         `json:"message"`
	Data    map[string]any `json:"data,omitempty"`
}

// terminatedExpired ends a subscription at its TTL.
var terminatedExpired = &termination{Code: rpcNotFound, Message: "NotFound",
	Data: map[string]any{"kind": "subscription", "reason": "the subscription reached its TTL without a refresh"}}

// terminatedRemoved ends a subscription whose sentinel the server removed
// (an operator's sentinel rm, or its watch reached its end).
var terminatedRemoved = &termination{Code: rpcNotFound, Message: "NotFound",
	Data: map[string]any{"kind": "subscription", "reason": "the server ended the subscription's watch"}}

// terminatedFailing ends a no-expiry subscription whose delivery stayed
// suspended (category is its lastError).
func terminatedFailing(category string) *termination {
	return &termination{Code: rpcCallbackEndpointError, Message: "CallbackEndpointError", Data: map[string]any{"reason": category}}
}

// gapBody is the gap envelope: delivery continues after cursor, events
// before it may have been skipped.
func gapBody(cursor string) []byte {
	b, _ := json.Marshal(map[string]string{"type": "gap", "cursor": cursor})
	return b
}

// sendTerminated POSTs a terminated envelope to an ended subscription's
// callback, retried with the delivery backoff up to retry_attempts, on a
// goroutine the dispatcher owns (stopped with it). The subscription no
// longer exists: nothing else is sent.
func (w *Webhooks) sendTerminated(rec *Record, t *termination) {
	body, _ := json.Marshal(map[string]any{"type": "terminated", "error": t})
	w.mu.Lock()
	ctx, wg := w.ctx, w.wg
	if ctx == nil || ctx.Err() != nil {
		w.mu.Unlock()
		return
	}
	wg.Add(1)
	w.mu.Unlock()
	s := w.svc
	go func() {
		defer wg.Done()
		for attempt := 1; ; attempt++ {
			res := post(ctx, w.client, rec.URL, rec.ID, controlID("terminated"), w.secrets(rec), body, s.now())
			if res.Category == "" || res.Status == 410 || res.Status == 413 || attempt >= s.cfg.RetryAttempts {
				return
			}
			if !sleepCtx(ctx, backoff(s.cfg.RetryBackoff, attempt)) {
				return
			}
		}
	}()
}

// secrets are the secrets deliveries of rec are signed with: the current
// one, and the one it replaced during the rotation grace.
func (w *Webhooks) secrets(rec *Record) []string {
	if len(rec.Secrets) > 1 && w.svc.now().UnixMilli() >= rec.OldSecretUntilMs {
		return rec.Secrets[:1]
	}
	return rec.Secrets
}

// lost reports whether events of rec may have been dropped before they
// reached the endpoint, the next delivered being at seq: the event that
// awaited its retry is not the one delivered (retention removed it), or
// events followed the last settled one and the feed no longer holds the
// positions after it.
func (w *Webhooks) lost(ctx context.Context, rec *Record, seq uint64) bool {
	if rec.InFlightSeq != 0 && rec.InFlightSeq != seq {
		return true
	}
	if rec.PendingAfter > 0 && seq > rec.SettledSeq+1 {
		if first, _, err := w.svc.feed.Head(ctx); err == nil && first > rec.SettledSeq+1 {
			return true
		}
	}
	return false
}
