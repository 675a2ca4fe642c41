package bus_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus"
)

// TestReadsThatTimeOutInAFailoverAreRetryable: errors a leader election
// or a reconnect explains become the domain's unavailable (503, repeat
// it); anything else keeps its own meaning.
func TestReadsThatTimeOutInAFailoverAreRetryable(t *testing.T) {
	unavailable := &sentinel.Error{Code: sentinel.CodeUnavailable}
	for _, err := range []error{context.DeadlineExceeded, nats.ErrTimeout, nats.ErrNoResponders, fmt.Errorf("get: %w", nats.ErrConnectionReconnecting)} {
		got := bus.Retryable(err)
		if !errors.Is(got, unavailable) || !errors.Is(got, err) {
			t.Errorf("%v: got %v, want unavailable wrapping it", err, got)
		}
	}
	plain := errors.New("malformed record")
	if got := bus.Retryable(plain); got != plain {
		t.Errorf("a plain error changed: %v", got)
	}
	if bus.Retryable(nil) != nil {
		t.Error("nil changed")
	}
}
