package agentpush

import (
	"context"
	"encoding/json"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
)

// Reasons of refused push requests, beyond the v2 ones.
const (
	reasonStaleTimestamp = "stale_timestamp"
	reasonBadSignature   = "bad_signature"
	reasonLegacyRejected = "legacy_signature_rejected"
)

// PreferredDelivery implements providers.DeliveryPreferrer: push to the
// daemon's public origin only when the operator opted in (delivery=push)
// and that origin is https; poll at intervalMs otherwise.
func (p *Provider) PreferredDelivery(ctx context.Context, intervalMs int) providers.Delivery {
	s, err := p.settings(ctx)
	if err == nil && s.delivery == providers.ModePush {
		if origin, ok := httpsOrigin(p.cfg.PublicURL().URL); ok {
			return providers.Delivery{Mode: providers.ModePush, CallbackURL: origin}
		}
	}
	return providers.Delivery{Mode: providers.ModePoll, IntervalMs: intervalMs}
}

// ParseInbound implements providers.InboundParser for one pushed envelope.
// h must be a push handle with a callback secret, else ErrUnknownHook. The
// signature is verified over the raw body before anything is parsed:
// failures are 401s with reason missing_signature, stale_timestamp,
// bad_signature or legacy_signature_rejected (a pre-v2 sha256= header on a
// v2 handle). Then the body must be JSON (400 invalid_json) and a valid
// envelope (400 invalid_envelope). Success is exactly one event. The clock
// is in.Now, else Config.Now.
func (p *Provider) ParseInbound(_ context.Context, in providers.Inbound, h sentinel.Handle) ([]sentinel.Event, error) {
	secret := h.StateString(stateCallbackSecret)
	if h.StateString(stateMode) != providers.ModePush || secret == "" {
		return nil, providers.ErrUnknownHook
	}
	if legacy := legacySignature(in.Header); legacy != "" {
		if h.StateString(stateSignature) == signatureV2 {
			return nil, providers.BadSignature(reasonLegacyRejected)
		}
		if !verifyLegacy(legacy, in.Body, secret) {
			return nil, providers.BadSignature(reasonBadSignature)
		}
	} else {
		now := in.Now
		if now.IsZero() {
			now = p.cfg.Now()
		}
		switch verifySignatureV2(in.Header, in.Body, secret, now) {
		case "":
		case reasonMissingTimestamp, reasonMissingSignature:
			return nil, providers.BadSignature(reasonMissingSignature)
		case reasonTimestampSkew:
			return nil, providers.BadSignature(reasonStaleTimestamp)
		default:
			return nil, providers.BadSignature(reasonBadSignature)
		}
	}
	if !json.Valid(in.Body) {
		return nil, providers.BadPayload("invalid_json")
	}
	ev, err := sentinel.ParseEnvelope(in.Body, nil)
	if err != nil {
		return nil, providers.BadPayload("invalid_envelope")
	}
	return []sentinel.Event{ev}, nil
}
