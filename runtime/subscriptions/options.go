package subscriptions

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/agentproto/sentinel/runtime/pause"
)

// ErrMissingDep is returned by New when a required dependency is nil.
var ErrMissingDep = errors.New("subscriptions: missing dependency")

// Option adjusts a Service built by New.
type Option func(*Service)

// WithConfig sets the MCP Events settings (DefaultConfig by default);
// Config.Webhook offers webhook delivery.
func WithConfig(c Config) Option { return func(s *Service) { s.cfg = c } }

// WithCadence answers nextPollMs with cadence() (the node's poll
// interval) when it is positive.
func WithCadence(cadence func() int64) Option { return func(s *Service) { s.cadence = cadence } }

// WithLogger logs the service's failures to log (discarded by default).
func WithLogger(log *slog.Logger) Option { return func(s *Service) { s.log = log } }

// WithClock reads the time from now (time.Now by default).
func WithClock(now func() time.Time) Option { return func(s *Service) { s.now = now } }

// WithPause holds the service at its named pause points (tests):
// PointRecreated.
func WithPause(p *pause.Points) Option { return func(s *Service) { s.pause = p } }

// New builds the events/* service over the subscription records, the
// feeds, the cursor signer and the sentinel service that watches for each
// subscription. It returns ErrMissingDep when one of them is nil. With
// Config.Webhook it also builds the webhook dispatcher (Webhooks).
func New(store *Store, feed *Feed, cursors *Cursors, sentinels Sentinels, opts ...Option) (*Service, error) {
	switch {
	case store == nil:
		return nil, fmt.Errorf("%w: store", ErrMissingDep)
	case feed == nil:
		return nil, fmt.Errorf("%w: feed", ErrMissingDep)
	case cursors == nil:
		return nil, fmt.Errorf("%w: cursors", ErrMissingDep)
	case sentinels == nil:
		return nil, fmt.Errorf("%w: sentinels", ErrMissingDep)
	}
	s := &Service{cfg: DefaultConfig(), store: store, feed: feed, cursors: cursors, sentinels: sentinels}
	for _, o := range opts {
		o(s)
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.cfg.Webhook {
		s.webhooks = newWebhooks(s)
	}
	return s, nil
}

// Webhooks returns the webhook dispatcher (nil when Config.Webhook is
// off): the node starts it.
func (s *Service) Webhooks() *Webhooks { return s.webhooks }

// Feed returns the subscriptions' feeds (a Router delivers to them).
func (s *Service) Feed() *Feed { return s.feed }

// Store returns the subscription records.
func (s *Service) Store() *Store { return s.store }
