package bus

import "github.com/nats-io/nats.go"

// The core NATS errors a bus user tests for with errors.Is, so packages
// above bus need not import nats.go for them.
var (
	// ErrMaxPayload: a message larger than the server accepts; no retry
	// stores it.
	ErrMaxPayload = nats.ErrMaxPayload
	// ErrTimeout: a request (a pull among them) that got no answer in
	// time.
	ErrTimeout = nats.ErrTimeout
)
