package sentinel

import "fmt"

// Error is a domain error carrying a stable machine-readable code (the
// catalogue in ingress/api maps codes to HTTP statuses) and a human message.
type Error struct {
	Code    string
	Message string
	Err     error
}

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Wrap returns an *Error with the given code whose message is msg and which
// wraps err.
func Wrap(code string, err error, msg string) *Error {
	return &Error{Code: code, Message: msg, Err: err}
}

func (e *Error) Error() string {
	if e.Message == "" {
		return e.Code
	}
	return e.Message
}

// Unwrap returns the wrapped cause, if any.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is an *Error with the same code, so
// errors.Is(err, &sentinel.Error{Code: "x"}) works across wrapping.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

// Error codes shared by every surface. The HTTP status of each lives in the
// ingress/api catalogue.
const (
	CodeInvalidInput        = "invalid_input"
	CodeMissingSubject      = "missing_subject"
	CodeAmbiguousSubject    = "ambiguous_subject"
	CodeInvalidPRURL        = "invalid_pr_url"
	CodeInvalidSubject      = "invalid_subject"
	CodeNoCallerIdentity    = "no_caller_identity"
	CodeSessionNotAlive     = "session_not_alive"
	CodeUnknownProvider     = "unknown_provider"
	CodeProviderCreateFail  = "provider_create_failed"
	CodeCreateFailed        = "create_failed"
	CodeNotImplemented      = "not_implemented"
	CodeSentinelNotFound    = "sentinel_not_found"
	CodeInvalidSessionID    = "invalid_session_id"
	CodeSessionNotFound     = "session_not_found"
	CodeFollowNotFound      = "follow_not_found"
	CodeInvalidSelector     = "invalid_selector"
	CodeNoFollower          = "no_follower"
	CodeConflict            = "conflict"
	CodeUnavailable         = "unavailable"
	CodeInternal            = "internal"
	CodeProviderNotReady    = "provider_not_ready"
	CodeProviderNotFound    = "adapter_not_found"
	CodeInvalidSetup        = "invalid_setup"
	CodeBodyTooLarge        = "body_too_large"
	CodeMalformedJSON       = "malformed_json"
	CodeUnauthorized        = "unauthorized"
	CodeNotFound            = "not_found"
	CodeMethodNotAllowed    = "method_not_allowed"
	CodeUnsupportedMedia    = "unsupported_media_type"
	CodeUnknownField        = "unknown_field"
	CodeInvalidUntil        = "invalid_until"
	CodeInvalidTarget       = "invalid_target"
	CodeInvalidUrgency      = "invalid_urgency"
	CodeInvalidTypes        = "invalid_types"
	CodeSubjectTerminalRepo = "subject_terminal_unsupported"
	CodeInvalidReplyTo      = "invalid_reply_to"
)

// CodeOutcomeUnknown is client-side only (ingress/apiclient, the stdio MCP
// bridge): a write reached a node but its answer was lost, so it may or may
// not have been done. No node answers it.
const CodeOutcomeUnknown = "outcome_unknown"

// CodeClusterUnavailable refuses a write on a node cut off from its
// cluster's quorum (503): nothing was done, another node can take it.
const CodeClusterUnavailable = "cluster_unavailable"

// CodeStorageFull refuses a write while the node's JetStream storage is
// full (nats.max_store reached, or the disk short of nats.min_free):
// nothing was done; retry later or on another node (503).
const CodeStorageFull = "storage_full"

// Setup error codes.
const (
	// CodeSetupCredentialsRequired refuses a setup that changes where a
	// provider sends its secrets (an endpoint field such as agentpush
	// baseUrl) without supplying the secrets again in the same call.
	CodeSetupCredentialsRequired = "setup_credentials_required"
	// CodeSetupEndpointRequired refuses a setup that supplies a new secret
	// while a custom endpoint is stored, without restating the endpoint.
	CodeSetupEndpointRequired = "setup_endpoint_required"
	// CodeInsecureURL refuses a URL that would carry a secret in clear
	// (plain http to a host that is not loopback).
	CodeInsecureURL = "insecure_url"
)

// MCP Events error codes (ingress/mcpevents maps them to the SEP-3415
// JSON-RPC errors named in the comments).
const (
	CodeEventNotFound        = "event_not_found"        // NotFound {kind: event}
	CodeSubscriptionNotFound = "subscription_not_found" // NotFound {kind: subscription}
	CodeInvalidArguments     = "invalid_arguments"      // InvalidParams
	CodeInvalidCursor        = "invalid_cursor"         // InvalidParams
	CodeInvalidCallback      = "invalid_callback"       // InvalidParams
	CodeForbidden            = "forbidden"              // Forbidden
	CodeUnsupportedDelivery  = "unsupported_delivery"   // Unsupported {feature: deliveryMode}
	CodeTooManySubscriptions = "too_many_subscriptions" // ResourceExhausted {limit: subscriptions}
	// CodeTooManyVerifications: the per-host limit of verification
	// challenges was reached (ResourceExhausted {limit: verifications}).
	CodeTooManyVerifications = "too_many_verifications"
	// CodeCallbackPrefix + a lastError category (connection_refused,
	// timeout, tls_error, http_4xx, http_5xx, challenge_failed) is a
	// CallbackEndpointError.
	CodeCallbackPrefix = "callback_"
)

// Principal error codes: what a token may do, and the named tokens.
const (
	// CodeForbiddenScope refuses what the caller's token may not do (its
	// scope, or a session outside its prefix).
	CodeForbiddenScope = "forbidden_scope"
	// CodeTokenExists refuses a named token whose name is taken.
	CodeTokenExists = "token_exists"
	// CodeTokenNotFound names a token that does not exist (or was
	// revoked).
	CodeTokenNotFound = "token_not_found"
)

// Storage sentinels shared by every layer: a missing key and a lost
// compare-and-set race. Stores wrap them; callers test with errors.Is.
var (
	ErrNotFound = &Error{Code: CodeNotFound, Message: "not found"}
	ErrConflict = &Error{Code: CodeConflict, Message: "revision conflict"}
)
