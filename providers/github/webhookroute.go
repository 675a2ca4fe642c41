package github

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
)

// CodeLookupFailed is the code of a delivery refused for now (503) because
// GitHub could not say which pull request a CI event of a fork belongs to;
// reconciliation brings the delivery again.
const CodeLookupFailed = "github_lookup_failed"

// WebhookHeader returns the first value of name in h, matching the name
// case-insensitively even when h was built with non-canonical keys.
func WebhookHeader(h http.Header, name string) string {
	if v := h.Get(name); v != "" {
		return v
	}
	for k, vs := range h {
		if strings.EqualFold(k, name) && len(vs) > 0 {
			return vs[0]
		}
	}
	return ""
}

// NormalizeDelivery normalizes one verified delivery of a webhook route
// (its signature already checked) and answers a failure as the inbound
// surface does: an event kind the catalogue does not know is no event, a
// head lookup GitHub could not answer is 503 CodeLookupFailed, a payload
// that cannot be read is a bad payload naming its reason.
func NormalizeDelivery(ctx context.Context, event string, h http.Header, body []byte, opts WebhookOptions, log *slog.Logger) ([]sentinel.Event, error) {
	evs, err := NormalizeWebhookWith(ctx, event, WebhookHeader(h, "X-GitHub-Delivery"), body, opts)
	var le *LookupError
	switch reason := WebhookReason(err); {
	case err == nil:
		return evs, nil
	case errors.Is(err, ErrUnsupportedWebhookEvent):
		return []sentinel.Event{}, nil
	case errors.As(err, &le):
		log.Warn("delivery refused for now: GitHub could not name its pull request", "source", opts.Source, "event", event, "err", le.Err)
		return nil, &providers.InboundError{Status: http.StatusServiceUnavailable, Code: CodeLookupFailed, Reason: providers.ReasonOf(le.Err).String()}
	case reason != "":
		return nil, providers.BadPayload(reason)
	default:
		return nil, providers.BadPayload(ReasonInvalidPayload)
	}
}
