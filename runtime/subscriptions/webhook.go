package subscriptions

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/agentproto/sentinel"
)

// Webhooks reports whether webhook delivery is offered.
func (c Config) Webhooks() bool { return false }

// Webhooks delivers webhook subscriptions (events/subscribe).
type Webhooks struct{ svc *Service }

// NewWebhooks builds the webhook dispatcher of svc.
func NewWebhooks(svc *Service) (*Webhooks, error) { return &Webhooks{svc: svc}, nil }

// Start runs the dispatcher until ctx ends.
func (w *Webhooks) Start(ctx context.Context, wg *sync.WaitGroup) error { return nil }

// Subscribe answers events/subscribe.
func (s *Service) Subscribe(ctx context.Context, principal string, raw json.RawMessage) (any, error) {
	return nil, sentinel.Errorf(sentinel.CodeUnsupportedDelivery, "webhook delivery is not offered by this server")
}

// Unsubscribe answers events/unsubscribe.
func (s *Service) Unsubscribe(ctx context.Context, principal string, raw json.RawMessage) (any, error) {
	return s.Subscribe(ctx, principal, raw)
}
