package agentpush

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
)

// Handle state keys.
const (
	stateMode           = "mode"
	stateConsumerRef    = "consumerRef"
	stateSignature      = "signature"
	stateHookKey        = "hookKey"
	stateCallbackSecret = "callbackSecret"
	signatureV2         = "v2"
)

// subjectRe is the shape agentpush accepts: <scheme>:<path>.
var subjectRe = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]*:`)

// createBody is the POST /subscriptions request. Types is null (no
// filter) when the clauses accept every type.
type createBody struct {
	Name           string         `json:"name"`
	Source         string         `json:"source"`
	Subject        string         `json:"subject"`
	Types          []string       `json:"types"`
	Mode           string         `json:"mode"`
	ConsumerRef    string         `json:"consumer_ref"`
	Until          sentinel.Until `json:"until"`
	CallbackURL    string         `json:"callback_url,omitempty"`
	CallbackSecret string         `json:"callback_secret,omitempty"`
}

// subscription is the part of an agentpush subscription the provider reads.
type subscription struct {
	ID          string `json:"id"`
	Status      string `json:"status"`
	Mode        string `json:"mode"`
	CallbackURL string `json:"callback_url"`
}

// subscriptionEnvelope wraps every subscription response.
type subscriptionEnvelope struct {
	Subscription subscription `json:"subscription"`
}

// Create implements providers.Provider: one subscription for the spec's
// single subject. Push is used only when req.Delivery asks for it with an
// https origin; otherwise the subscription polls. Without a stored key it
// fails with the setup reason and makes no HTTP call.
func (p *Provider) Create(ctx context.Context, req providers.CreateRequest) (sentinel.Handle, error) {
	body, err := p.createBody(req)
	if err != nil {
		return sentinel.Handle{}, err
	}
	c, _, err := p.client(ctx)
	if err != nil {
		return sentinel.Handle{}, err
	}
	state := map[string]any{
		stateMode:        body.Mode,
		stateConsumerRef: body.ConsumerRef,
		stateSignature:   signatureV2,
	}
	if origin, ok := pushOrigin(req.Delivery); ok {
		hookKey, err := randomHex(16)
		if err != nil {
			return sentinel.Handle{}, err
		}
		secret, err := randomHex(32)
		if err != nil {
			return sentinel.Handle{}, err
		}
		body.Mode = providers.ModePush
		body.CallbackURL = callbackURL(origin, hookKey)
		body.CallbackSecret = secret
		state[stateMode] = providers.ModePush
		state[stateHookKey] = hookKey
		state[stateCallbackSecret] = secret
	}
	var out subscriptionEnvelope
	if err := c.do(ctx, http.MethodPost, "/subscriptions", body, &out); err != nil {
		return sentinel.Handle{}, err
	}
	if out.Subscription.ID == "" {
		return sentinel.Handle{}, &providers.Error{Reason: providers.ReasonInvalid, Message: "agentpush POST /subscriptions: response has no subscription id"}
	}
	p.cfg.Log.InfoContext(ctx, "agentpush subscription created",
		"sentinel", req.SentinelID, "subscription", out.Subscription.ID, "mode", body.Mode, "subject", body.Subject)
	return sentinel.Handle{Provider: Slug, RemoteID: out.Subscription.ID, Cursor: "0", State: state}, nil
}

// createBody maps the spec to a poll-mode subscription request. It refuses
// specs whose clauses do not share one <scheme>:<path> subject.
func (p *Provider) createBody(req providers.CreateRequest) (createBody, error) {
	if len(req.Spec.Match) == 0 {
		return createBody{}, providers.SetupError("agentpush needs one match clause with a subject")
	}
	subject := req.Spec.Match[0].Subject
	if !subjectRe.MatchString(subject) {
		return createBody{}, providers.SetupError("agentpush subject %q must look like <scheme>:<path>", subject)
	}
	var types []string
	all := false
	for _, cl := range req.Spec.Match {
		if cl.Subject != subject {
			return createBody{}, providers.SetupError(
				"agentpush watches one subject per sentinel: clause subject %q differs from %q; create one sentinel per subject", cl.Subject, subject)
		}
		ts := cl.Types
		if len(ts) == 0 {
			ts = p.DefaultTypes(subject)
		}
		for _, t := range ts {
			if t == "*" {
				all = true
			}
			if !slices.Contains(types, t) {
				types = append(types, t)
			}
		}
	}
	if all {
		types = nil
	}
	id := req.SentinelID
	if id == "" {
		suffix, err := randomHex(6)
		if err != nil {
			return createBody{}, err
		}
		id = "unbound_" + suffix
	}
	return createBody{
		Name:        "agentproto sentinel " + id,
		Source:      strings.ToLower(sentinel.SchemeOf(subject)),
		Subject:     subject,
		Types:       types,
		Mode:        providers.ModePoll,
		ConsumerRef: "agentproto:sentinel:" + id,
		Until:       req.Spec.Until,
	}, nil
}

// Attach implements providers.Provider. It checks that the subscription
// still exists (a 404 is an error naming the fix; any other failure is
// tolerated and logged) and re-points a push subscription whose callback
// URL changed. The delivery mode of a subscription is never switched.
func (p *Provider) Attach(ctx context.Context, h sentinel.Handle, d providers.Delivery) (sentinel.Handle, error) {
	log := p.cfg.Log.With("subscription", h.RemoteID)
	if h.RemoteID == "" {
		return h, providers.SetupError("agentpush handle has no subscription id — re-create the sentinel")
	}
	c, _, err := p.client(ctx)
	if err != nil {
		return h, err
	}
	var out subscriptionEnvelope
	if err := c.do(ctx, http.MethodGet, subscriptionPath(h.RemoteID, ""), nil, &out); err != nil {
		if providers.ReasonOf(err) == providers.ReasonNotFound {
			return h, &providers.Error{Reason: providers.ReasonNotFound, Err: err,
				Message: "agentpush subscription " + h.RemoteID + " no longer exists — re-create the sentinel"}
		}
		log.WarnContext(ctx, "agentpush attach: subscription check failed; keeping the handle", "err", err)
		return h, nil
	}
	if h.StateString(stateMode) != providers.ModePush {
		return h, nil
	}
	hookKey := h.StateString(stateHookKey)
	origin, ok := pushOrigin(d)
	if !ok {
		origin, ok = httpsOrigin(p.cfg.PublicURL().URL)
	}
	if !ok || hookKey == "" {
		return h, nil
	}
	want := callbackURL(origin, hookKey)
	if out.Subscription.CallbackURL == want {
		return h, nil
	}
	if err := c.do(ctx, http.MethodPatch, subscriptionPath(h.RemoteID, ""), map[string]string{"callback_url": want}, nil); err != nil {
		log.WarnContext(ctx, "agentpush attach: re-pointing the push callback failed", "err", err)
		return h, nil
	}
	log.InfoContext(ctx, "agentpush push callback re-pointed", "origin", origin)
	return h, nil
}

// Cancel implements providers.Provider: DELETE the subscription. A 404 is
// success, so Cancel is idempotent.
func (p *Provider) Cancel(ctx context.Context, h sentinel.Handle) error {
	if h.RemoteID == "" {
		return nil
	}
	c, _, err := p.client(ctx)
	if err != nil {
		return err
	}
	err = c.do(ctx, http.MethodDelete, subscriptionPath(h.RemoteID, ""), nil, nil)
	if providers.ReasonOf(err) == providers.ReasonNotFound {
		return nil
	}
	return err
}

// Status implements providers.Provider from subscription.status. Upstream
// failures are reported in the Health (OK false, Detail the classified
// message, Extra reason and retryable), never as an error.
func (p *Provider) Status(ctx context.Context, h sentinel.Handle) (providers.Health, error) {
	if h.RemoteID == "" {
		return providers.Health{Detail: "the agentpush handle has no subscription id — re-create the sentinel"}, nil
	}
	c, _, err := p.client(ctx)
	if err != nil {
		return failedHealth(err), nil
	}
	var out subscriptionEnvelope
	if err := c.do(ctx, http.MethodGet, subscriptionPath(h.RemoteID, ""), nil, &out); err != nil {
		if providers.ReasonOf(err) == providers.ReasonNotFound {
			return providers.Health{Detail: "the agentpush subscription " + h.RemoteID + " was deleted",
				Extra: map[string]any{"reason": providers.ReasonNotFound.String()}}, nil
		}
		return failedHealth(err), nil
	}
	extra := map[string]any{"mode": h.StateString(stateMode), "status": out.Subscription.Status}
	if out.Subscription.Status != "active" {
		return providers.Health{Detail: "the agentpush subscription is " + out.Subscription.Status, Extra: extra}, nil
	}
	return providers.Health{OK: true, Extra: extra}, nil
}

// failedHealth reports a classified failure.
func failedHealth(err error) providers.Health {
	extra := map[string]any{"reason": providers.ReasonOf(err).String()}
	var pe *providers.Error
	if errors.As(err, &pe) {
		extra["retryable"] = pe.Retryable
	}
	return providers.Health{Detail: err.Error(), Extra: extra}
}

// pushOrigin returns the callback origin when d asks for push with an
// https origin.
func pushOrigin(d providers.Delivery) (string, bool) {
	if d.Mode != providers.ModePush {
		return "", false
	}
	return httpsOrigin(d.CallbackURL)
}

// httpsOrigin returns u without trailing slashes when it is an https URL.
func httpsOrigin(u string) (string, bool) {
	u = strings.TrimRight(strings.TrimSpace(u), "/")
	if !strings.HasPrefix(strings.ToLower(u), "https://") || len(u) == len("https://") {
		return "", false
	}
	return u, true
}

// callbackURL is the push route of one hook key under origin.
func callbackURL(origin, hookKey string) string {
	return origin + "/inbound/sentinel-" + hookKey
}

// randomHex returns n random bytes as hex.
func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", &providers.Error{Reason: providers.ReasonUnknown, Message: "agentpush: read random bytes", Err: err}
	}
	return hex.EncodeToString(b), nil
}
