package webhook

import (
	"context"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/github"
)

// Inbound failure codes beyond the normalizer's reasons.
const (
	CodeMissingEventHeader = "missing_event_header"
	// CodeLookupFailed (503): a fork PR's CI whose PR GitHub could not
	// name just now. The delivery fails on GitHub's side and
	// reconciliation asks for it again.
	CodeLookupFailed = github.CodeLookupFailed
)

// ParseInbound verifies and normalizes one GitHub delivery to
// /inbound/sentinel-<in.HookKey> (h.State's hookKey when in.HookKey is
// empty). In order: an unknown key is providers.ErrUnknownHook; the
// X-Hub-Signature-256 HMAC over the raw body is checked against the hook's
// secret before anything is parsed (401 bad_signature with reason
// missing_signature or bad_signature); X-GitHub-Event is required
// (missing_event_header); a ping yields no events; X-GitHub-Delivery is
// required (missing_delivery_header); the body must be JSON (invalid_json);
// then the payload is normalized: an unsupported event type yields no
// events, a malformed payload a 400 with the normalizer's reason, a
// payload that contradicts X-GitHub-Event event_payload_mismatch. Header
// names are matched case-insensitively.
//
// The event id is the spec's evt_<X-GitHub-Delivery>; neither that header
// nor X-GitHub-Event is covered by the signature, so every event also
// carries the signed body's digest as its DedupKey: a captured delivery
// re-sent under fresh delivery ids is a duplicate in the seen window, and
// so is another body under a delivery id already handled. A CI event that
// names no PR (a fork's) is mapped to its PR by its head commit (github.HeadLookup);
// when GitHub cannot say just now the delivery is refused with 503
// github_lookup_failed, for reconciliation to bring it again.
func (p *Provider) ParseInbound(ctx context.Context, in providers.Inbound, h sentinel.Handle) ([]sentinel.Event, error) {
	key := in.HookKey
	if key == "" {
		key = providers.HookKeyOf(h)
	}
	rec, err := p.store().byKey(ctx, key)
	if err != nil {
		return nil, err
	}
	if rec == nil {
		return nil, providers.ErrUnknownHook
	}
	if reason := github.VerifyWebhookSignature(rec.Secret, in.Body, github.WebhookHeader(in.Header, github.WebhookSignatureHeader)); reason != "" {
		return nil, providers.BadSignature(reason)
	}
	event := github.WebhookHeader(in.Header, "X-GitHub-Event")
	if event == "" {
		return nil, providers.BadPayload(CodeMissingEventHeader)
	}
	if event == github.WebhookPing {
		return []sentinel.Event{}, nil
	}
	now := in.Now
	if now.IsZero() {
		now = p.cfg.Now()
	}
	evs, err := github.NormalizeDelivery(ctx, event, in.Header, in.Body,
		github.WebhookOptions{Source: Source, Now: now, Lookup: p.lookup}, p.cfg.Log)
	if err == nil {
		p.self.Mark(ctx, evs) // the loop shield: the sender is gh's own identity
	}
	return evs, err
}
