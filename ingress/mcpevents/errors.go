package mcpevents

import (
	"errors"
	"strings"

	"github.com/agentproto/sentinel"
)

// JSON-RPC error codes: the standard ones and SEP-3415's.
const (
	CodeMethodNotFound        = -32601
	CodeInvalidParams         = -32602
	CodeInternal              = -32603
	CodeHeaderMismatch        = -32020
	CodeNotFound              = -32023
	CodeForbidden             = -32024
	CodeResourceExhausted     = -32025
	CodeUnsupported           = -32026
	CodeCallbackEndpointError = -32027
)

// codeTooManyStreams is the node's stream-cap code (ingress/api's
// CodeTooManyStreams; this package imports the domain only).
const codeTooManyStreams = "too_many_streams"

// RPCError is a JSON-RPC error object. Message is the SEP's error name;
// data carries the specifics (data.reason is the human explanation).
type RPCError struct {
	Code    int            `json:"code"`
	Message string         `json:"message"`
	Data    map[string]any `json:"data,omitempty"`
}

// ToRPC maps a service error to the SEP's error table by its code:
// unknown event name and unknown subscription are NotFound (data.kind),
// bad arguments, params, cursors and callbacks InvalidParams, an
// unauthorised principal Forbidden, a limit ResourceExhausted, a delivery
// mode not offered Unsupported, a failed callback CallbackEndpointError
// (data.reason its category). Anything else is InternalError without
// detail (the caller logs it).
func ToRPC(err error) (*RPCError, bool) {
	var se *sentinel.Error
	if !errors.As(err, &se) {
		return &RPCError{Code: CodeInternal, Message: "InternalError", Data: map[string]any{"reason": "the server failed; try again"}}, false
	}
	reason := map[string]any{"reason": se.Message}
	switch code := se.Code; {
	case code == sentinel.CodeEventNotFound:
		return &RPCError{Code: CodeNotFound, Message: "NotFound", Data: map[string]any{"kind": "event", "reason": se.Message}}, true
	case code == sentinel.CodeSubscriptionNotFound:
		return &RPCError{Code: CodeNotFound, Message: "NotFound", Data: map[string]any{"kind": "subscription", "reason": se.Message}}, true
	case code == sentinel.CodeForbidden || code == sentinel.CodeUnauthorized:
		return &RPCError{Code: CodeForbidden, Message: "Forbidden", Data: reason}, true
	case code == sentinel.CodeTooManySubscriptions:
		return &RPCError{Code: CodeResourceExhausted, Message: "ResourceExhausted", Data: map[string]any{"limit": "subscriptions", "reason": se.Message}}, true
	case code == codeTooManyStreams:
		return &RPCError{Code: CodeResourceExhausted, Message: "ResourceExhausted", Data: map[string]any{"limit": "streams", "reason": se.Message}}, true
	case code == sentinel.CodeTooManyVerifications:
		return &RPCError{Code: CodeResourceExhausted, Message: "ResourceExhausted", Data: map[string]any{"limit": "verifications", "reason": se.Message}}, true
	case code == sentinel.CodeUnsupportedDelivery:
		return &RPCError{Code: CodeUnsupported, Message: "Unsupported", Data: map[string]any{"feature": "deliveryMode", "value": "webhook", "reason": se.Message}}, true
	case strings.HasPrefix(code, sentinel.CodeCallbackPrefix):
		return &RPCError{Code: CodeCallbackEndpointError, Message: "CallbackEndpointError",
			Data: map[string]any{"reason": strings.TrimPrefix(code, sentinel.CodeCallbackPrefix)}}, true
	case strings.HasPrefix(code, "invalid_") || code == sentinel.CodeMissingSubject || code == sentinel.CodeAmbiguousSubject ||
		code == sentinel.CodeUnknownProvider || code == sentinel.CodeSubjectTerminalRepo:
		return &RPCError{Code: CodeInvalidParams, Message: "InvalidParams", Data: reason}, true
	case code == sentinel.CodeUnavailable || code == sentinel.CodeClusterUnavailable || code == sentinel.CodeProviderCreateFail:
		return &RPCError{Code: CodeInternal, Message: "InternalError", Data: reason}, true
	}
	return &RPCError{Code: CodeInternal, Message: "InternalError", Data: map[string]any{"reason": "the server failed; try again"}}, false
}
