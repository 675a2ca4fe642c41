package providers

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// Reason classifies a provider failure; String() is used as a metric label.
type Reason int

// Reasons.
const (
	ReasonUnknown Reason = iota
	ReasonSetup
	ReasonAuth
	ReasonForbidden
	ReasonNotFound
	ReasonRateLimited
	ReasonServer
	ReasonNetwork
	ReasonInvalid
)

func (r Reason) String() string {
	switch r {
	case ReasonSetup:
		return "setup"
	case ReasonAuth:
		return "auth"
	case ReasonForbidden:
		return "forbidden"
	case ReasonNotFound:
		return "not_found"
	case ReasonRateLimited:
		return "rate_limited"
	case ReasonServer:
		return "server"
	case ReasonNetwork:
		return "network"
	case ReasonInvalid:
		return "invalid"
	}
	return "unknown"
}

// Error is a classified provider error. Message must never contain a
// credential.
type Error struct {
	Reason     Reason
	Retryable  bool
	RetryAfter time.Duration
	Message    string
	Err        error
}

func (e *Error) Error() string {
	if e.Err != nil && e.Message == "" {
		return e.Err.Error()
	}
	return e.Message
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// SetupError returns a non-retryable setup error whose message names the fix.
func SetupError(format string, args ...any) *Error {
	return &Error{Reason: ReasonSetup, Message: fmt.Sprintf(format, args...)}
}

// ReasonOf returns the classification of err, ReasonUnknown if none.
func ReasonOf(err error) Reason {
	var pe *Error
	if errors.As(err, &pe) {
		return pe.Reason
	}
	return ReasonUnknown
}

// ClassifyHTTP classifies an HTTP status and headers: 401 auth; 403 with a
// rate-limit signal (Retry-After, X-RateLimit-Remaining: 0) or 429
// rate-limited and retryable after the advertised wait; other 403
// forbidden; 404 not found; 5xx server (retryable); other 4xx invalid.
// now is used to turn X-RateLimit-Reset into a wait.
func ClassifyHTTP(status int, h http.Header, now time.Time) *Error {
	e := &Error{Message: fmt.Sprintf("HTTP %d", status)}
	wait := retryAfter(h, now)
	switch {
	case status == http.StatusUnauthorized:
		e.Reason = ReasonAuth
	case status == http.StatusTooManyRequests,
		status == http.StatusForbidden && (h.Get("Retry-After") != "" || h.Get("X-RateLimit-Remaining") == "0"):
		e.Reason, e.Retryable, e.RetryAfter = ReasonRateLimited, true, wait
		if e.RetryAfter <= 0 {
			e.RetryAfter = time.Minute
		}
	case status == http.StatusForbidden:
		e.Reason = ReasonForbidden
	case status == http.StatusNotFound:
		e.Reason = ReasonNotFound
	case status >= 500:
		e.Reason, e.Retryable, e.RetryAfter = ReasonServer, true, wait
	case status >= 400:
		e.Reason = ReasonInvalid
	}
	return e
}

func retryAfter(h http.Header, now time.Time) time.Duration {
	if v := h.Get("Retry-After"); v != "" {
		if s, err := strconv.Atoi(v); err == nil && s >= 0 {
			return time.Duration(s) * time.Second
		}
		if t, err := http.ParseTime(v); err == nil {
			return t.Sub(now)
		}
	}
	if h.Get("X-RateLimit-Remaining") == "0" {
		if reset, err := strconv.ParseInt(h.Get("X-RateLimit-Reset"), 10, 64); err == nil {
			if d := time.Unix(reset, 0).Sub(now); d > 0 {
				return d
			}
		}
	}
	return 0
}

// ErrUnknownHook is returned by ParseInbound when the hook key is not known.
// The ingress answers a bare 404 that echoes nothing.
var ErrUnknownHook = errors.New("unknown hook")

// InboundError is a refused push delivery: Status 401 for signature
// failures (Code bad_signature, Reason the detail) and 400 for malformed
// payloads (Code the reason, e.g. invalid_json).
type InboundError struct {
	Status int
	Code   string
	Reason string
}

func (e *InboundError) Error() string {
	if e.Reason != "" && e.Reason != e.Code {
		return e.Code + ": " + e.Reason
	}
	return e.Code
}

// BadSignature returns a 401 bad_signature error with the given reason.
func BadSignature(reason string) *InboundError {
	return &InboundError{Status: http.StatusUnauthorized, Code: "bad_signature", Reason: reason}
}

// BadPayload returns a 400 error with the given code.
func BadPayload(code string) *InboundError {
	return &InboundError{Status: http.StatusBadRequest, Code: code, Reason: code}
}
