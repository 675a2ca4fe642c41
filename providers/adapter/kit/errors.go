package kit

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/creachadair/jrpc2"
)

// CodeAdapterError is the JSON-RPC error code of every failure an adapter
// reports on purpose (Error); its data carries the classification.
const CodeAdapterError = -32000

// Reasons an Error may carry: the node maps them onto its provider error
// classes (docs/adapters.md, "Errors").
const (
	ReasonSetup       = "setup"
	ReasonAuth        = "auth"
	ReasonForbidden   = "forbidden"
	ReasonNotFound    = "not_found"
	ReasonRateLimited = "rate_limited"
	ReasonServer      = "server"
	ReasonNetwork     = "network"
	ReasonInvalid     = "invalid"
)

// Error is a classified failure an adapter answers: Reason (one of the
// Reason constants), whether the node may retry and after how long, and,
// for parseInbound, the HTTP status (401 signature, 400 malformed) and a
// short code the ingress answers with. Message names the fix and must never
// carry a credential.
type Error struct {
	Reason     string        `json:"reason"`
	Message    string        `json:"-"`
	Retryable  bool          `json:"retryable,omitempty"`
	RetryAfter time.Duration `json:"-"`
	// RetryAfterMs is RetryAfter on the wire.
	RetryAfterMs int64  `json:"retryAfterMs,omitempty"`
	Status       int    `json:"status,omitempty"`
	Code         string `json:"code,omitempty"`
}

func (e *Error) Error() string { return e.Message }

// Errorf returns an Error of reason with a formatted message.
func Errorf(reason, format string, args ...any) *Error {
	return &Error{Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// InboundRefused returns the Error a parseInbound answers for a request it
// refuses: status 401 for a bad signature, 400 for a malformed body.
func InboundRefused(status int, code, message string) *Error {
	return &Error{Reason: ReasonInvalid, Status: status, Code: code, Message: message}
}

// toRPC turns a handler's error into the JSON-RPC error on the wire: an
// *Error keeps its classification in data, anything else is a non-retryable
// failure of unknown reason.
func toRPC(err error) error {
	var e *Error
	if !errors.As(err, &e) {
		return &jrpc2.Error{Code: CodeAdapterError, Message: err.Error()}
	}
	wire := *e
	if wire.RetryAfter > 0 {
		wire.RetryAfterMs = wire.RetryAfter.Milliseconds()
	}
	return (&jrpc2.Error{Code: CodeAdapterError, Message: e.Message}).WithData(wire)
}

// FromRPC reads an adapter's classified error back from a JSON-RPC error
// (the node's side of toRPC); ok is false for an error that is not one.
func FromRPC(err error) (e *Error, ok bool) {
	var je *jrpc2.Error
	if !errors.As(err, &je) || je.Code != CodeAdapterError {
		return nil, false
	}
	e = &Error{Message: je.Message}
	if len(je.Data) > 0 {
		if uerr := json.Unmarshal(je.Data, e); uerr != nil {
			return &Error{Message: je.Message}, true
		}
	}
	e.Message = je.Message
	if e.RetryAfterMs > 0 {
		e.RetryAfter = time.Duration(e.RetryAfterMs) * time.Millisecond
	}
	return e, true
}
