package api

import (
	"errors"
	"net/http"

	"github.com/agentproto/sentinel"
)

// Error codes of the HTTP surface itself (the domain codes live in the
// root package).
const (
	// CodeForbiddenHost refuses a Host header the node does not answer to
	// (DNS rebinding): not loopback, not allowed_hosts, not the public URL.
	CodeForbiddenHost = "forbidden_host"
	// CodeForbiddenOrigin refuses a state-changing request sent by a page
	// of another origin (Origin or Sec-Fetch-Site says cross-origin).
	CodeForbiddenOrigin = "forbidden_origin"
	// CodeTooManyStreams refuses an SSE stream or a ?wait= long-poll over
	// the per-session or the node-wide cap.
	CodeTooManyStreams = "too_many_streams"
	// CodeBodyTimeout ends a request whose body did not arrive within the
	// body read timeout.
	CodeBodyTimeout = "body_timeout"
	// CodeNotClustered refuses a cluster operation on a single node.
	CodeNotClustered = "not_clustered"
	// CodeNodeNotFound names a node that is neither a member nor a
	// JetStream peer.
	CodeNodeNotFound = "node_not_found"
	// CodeNodeLive refuses to remove a node whose heartbeat is current
	// (without force), or the node that answers.
	CodeNodeLive = "node_live"
	// CodePeerRemoveFailed: JetStream refused a peer removal or did not
	// answer (no meta leader).
	CodePeerRemoveFailed = "peer_remove_failed"
	// CodeEndpointOperatorOnly refuses an endpoint setting (a URL a
	// provider sends credentials to) through MCP: an operator sets it
	// through the CLI or the API, with an admin token.
	CodeEndpointOperatorOnly = "endpoint_operator_only"
)

// Entry is one row of the error catalogue.
type Entry struct {
	Code   string
	Status int
}

// catalogue maps every error code a surface may return to its HTTP status.
// Codes not listed are 500.
var catalogue = map[string]int{
	sentinel.CodeInvalidInput:        http.StatusBadRequest,
	sentinel.CodeMissingSubject:      http.StatusBadRequest,
	sentinel.CodeAmbiguousSubject:    http.StatusBadRequest,
	sentinel.CodeInvalidPRURL:        http.StatusBadRequest,
	sentinel.CodeInvalidSubject:      http.StatusBadRequest,
	sentinel.CodeNoCallerIdentity:    http.StatusBadRequest,
	sentinel.CodeSessionNotAlive:     http.StatusBadRequest,
	sentinel.CodeUnknownProvider:     http.StatusBadRequest,
	sentinel.CodeProviderCreateFail:  http.StatusBadRequest,
	sentinel.CodeCreateFailed:        http.StatusInternalServerError,
	sentinel.CodeNotImplemented:      http.StatusBadRequest,
	sentinel.CodeInvalidSessionID:    http.StatusBadRequest,
	sentinel.CodeInvalidReplyTo:      http.StatusBadRequest,
	sentinel.CodeInvalidUntil:        http.StatusBadRequest,
	sentinel.CodeInvalidBatch:        http.StatusBadRequest,
	sentinel.CodeInvalidTarget:       http.StatusBadRequest,
	sentinel.CodeInvalidUrgency:      http.StatusBadRequest,
	sentinel.CodeInvalidTypes:        http.StatusBadRequest,
	sentinel.CodeSubjectTerminalRepo: http.StatusBadRequest,
	sentinel.CodeInvalidSelector:     http.StatusBadRequest,
	sentinel.CodeNoFollower:          http.StatusBadRequest,
	sentinel.CodeInvalidSetup:        http.StatusBadRequest,
	sentinel.CodeProviderNotReady:    http.StatusBadRequest,
	sentinel.CodeMalformedJSON:       http.StatusBadRequest,
	sentinel.CodeUnknownField:        http.StatusBadRequest,
	sentinel.CodeBodyTooLarge:        http.StatusBadRequest,
	sentinel.CodeUnsupportedMedia:    http.StatusUnsupportedMediaType,
	sentinel.CodeSentinelNotFound:    http.StatusNotFound,
	sentinel.CodeSessionNotFound:     http.StatusNotFound,
	sentinel.CodeFollowNotFound:      http.StatusNotFound,
	sentinel.CodeProviderNotFound:    http.StatusNotFound,
	sentinel.CodeNotFound:            http.StatusNotFound,
	sentinel.CodeUnauthorized:        http.StatusUnauthorized,
	sentinel.CodeMethodNotAllowed:    http.StatusMethodNotAllowed,
	sentinel.CodeConflict:            http.StatusConflict,
	sentinel.CodeUnavailable:         http.StatusServiceUnavailable,
	sentinel.CodeClusterUnavailable:  http.StatusServiceUnavailable,
	sentinel.CodeStorageFull:         http.StatusServiceUnavailable,
	sentinel.CodeInternal:            http.StatusInternalServerError,
	CodeForbiddenHost:                http.StatusForbidden,
	CodeForbiddenOrigin:              http.StatusForbidden,
	CodeTooManyStreams:               http.StatusTooManyRequests,
	CodeBodyTimeout:                  http.StatusRequestTimeout,
	CodeNotClustered:                 http.StatusBadRequest,
	CodeNodeNotFound:                 http.StatusNotFound,
	CodeNodeLive:                     http.StatusConflict,
	CodePeerRemoveFailed:             http.StatusInternalServerError,
	sentinel.CodeForbiddenScope:      http.StatusForbidden,
	sentinel.CodeTokenExists:         http.StatusConflict,
	sentinel.CodeTokenNotFound:       http.StatusNotFound,
	CodeEndpointOperatorOnly:         http.StatusForbidden,
	CodeNotReady:                     http.StatusServiceUnavailable,

	// The decision journal, explain, dry runs and replays.
	sentinel.CodeEventNotFound:  http.StatusNotFound,
	sentinel.CodeParkedNotFound: http.StatusNotFound,
	sentinel.CodeNotReplayable:  http.StatusBadRequest,
	sentinel.CodePostMortem:     http.StatusConflict,

	// Setup refusals.
	sentinel.CodeSetupCredentialsRequired: http.StatusBadRequest,
	sentinel.CodeSetupEndpointRequired:    http.StatusBadRequest,
	sentinel.CodeInsecureURL:              http.StatusBadRequest,
}

// Status returns the HTTP status of a code (500 when unknown).
func Status(code string) int {
	if s, ok := catalogue[code]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// ErrorBody is the JSON body of every error answer.
type ErrorBody struct {
	Error   string `json:"error"`
	Message string `json:"message"`
	// Reason is set on not_ready answers: why the node cannot work yet
	// (ReasonWaitingForPeers, ...).
	Reason string `json:"reason,omitempty"`
}

// FromError maps any error to its code, status and message. Domain errors
// keep their code; anything else is internal (the message is generic so no
// internal detail leaks).
func FromError(err error) (int, ErrorBody) {
	var de *sentinel.Error
	var nr *NotReady
	if errors.As(err, &nr) {
		return Status(CodeNotReady), ErrorBody{Error: CodeNotReady, Message: nr.Message, Reason: nr.Reason}
	}
	if d := findCode(err, sentinel.CodeStorageFull); d != nil {
		// A full store explains whatever failed around it.
		return Status(d.Code), ErrorBody{Error: d.Code, Message: d.Error()}
	}
	if errors.As(err, &de) {
		return Status(de.Code), ErrorBody{Error: de.Code, Message: de.Error()}
	}
	return http.StatusInternalServerError, ErrorBody{Error: sentinel.CodeInternal, Message: "internal error"}
}

// findCode returns the first *sentinel.Error with code in err's tree.
func findCode(err error, code string) *sentinel.Error {
	switch e := err.(type) {
	case nil:
		return nil
	case *sentinel.Error:
		if e.Code == code {
			return e
		}
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		return findCode(u.Unwrap(), code)
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			if d := findCode(e, code); d != nil {
				return d
			}
		}
	}
	return nil
}

// Exit codes of the CLI, one per class of failure.
const (
	ExitOK          = 0
	ExitError       = 1 // internal or unexpected
	ExitUsage       = 2 // bad flags or arguments
	ExitInvalid     = 3 // the node refused the request (4xx other than below)
	ExitNotFound    = 4 // unknown id
	ExitAuth        = 5 // missing or wrong token
	ExitUnavailable = 6 // no node reachable
	// ExitOutcomeUnknown: a write reached a node but its answer was lost
	// (ingress/apiclient.ErrOutcomeUnknown); check before repeating it.
	ExitOutcomeUnknown = 7
)

// ExitCode maps an HTTP status to the CLI exit code.
func ExitCode(status int) int {
	switch {
	case status < 400:
		return ExitOK
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return ExitAuth
	case status == http.StatusNotFound:
		return ExitNotFound
	case status == http.StatusServiceUnavailable:
		return ExitUnavailable
	case status < 500:
		return ExitInvalid
	}
	return ExitError
}
