package deliver

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus"
)

// ErrPermanent marks (wrapped) a delivery failure that no retry can fix.
// A router may wrap it; Permanent also recognizes the validation and size
// errors of the stores on its own.
var ErrPermanent = errors.New("permanent delivery failure")

// Permanent reports whether a failed delivery can never succeed however
// often it is retried: ErrPermanent, a message refused by validation
// (invalid input, session id or urgency) or one larger than the bus
// accepts. Such an event is parked at once instead of retried.
func Permanent(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, ErrPermanent) || errors.Is(err, bus.ErrMaxPayload) || errors.Is(err, jetstream.ErrStreamMessageExceedsMaximum) {
		return true
	}
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) && apiErr.ErrorCode == jetstream.JSErrCodeStreamMessageExceedsMaximum {
		return true
	}
	var de *sentinel.Error
	if errors.As(err, &de) {
		switch de.Code {
		case sentinel.CodeInvalidInput, sentinel.CodeInvalidSessionID, sentinel.CodeInvalidUrgency, "invalid_envelope":
			return true
		}
	}
	return false
}

// settleTimeout bounds the writes that settle an event once its outcome is
// known (the record commit after a delivery or park, a give-up park and
// its seen mark).
const settleTimeout = 10 * time.Second

// settleContext returns a fresh context for settling an event: it keeps
// ctx's values but not its cancellation or deadline, so an outcome reached
// at the end of the handle deadline (a resume hook that used it up) is
// still recorded instead of retried from scratch.
func settleContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
}
