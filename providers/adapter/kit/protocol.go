package kit

import (
	"encoding/json"
	"time"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
)

// ProtocolVersion is the version of the adapter protocol this package
// speaks. describe answers it; a node refuses an adapter that answers
// another.
const ProtocolVersion = 1

// Methods of the protocol. The node calls them; the adapter answers.
const (
	MethodDescribe     = "describe"
	MethodReadiness    = "readiness"
	MethodSetup        = "setup"
	MethodCreate       = "create"
	MethodAttach       = "attach"
	MethodCancel       = "cancel"
	MethodStatus       = "status"
	MethodPoll         = "poll"
	MethodParseInbound = "parseInbound"
	// MethodCancelRequest is a notification (no answer): the node gave up
	// on the call with the id in CancelRequestParams (its timeout passed).
	MethodCancelRequest = "cancelRequest"
)

// DefaultMaxMessageBytes caps one message (one line) in either direction.
const DefaultMaxMessageBytes = 4 << 20

// Limits on what an adapter returns (the node enforces them).
const (
	MaxCursorBytes = 512 << 10
	MaxStateBytes  = 64 << 10
	MaxRemoteID    = 256
)

// Description is the answer of describe: who the adapter is and what it
// can do. Slug must equal the <slug> of the executable's name.
type Description struct {
	ProtocolVersion int                    `json:"protocolVersion"`
	Slug            string                 `json:"slug"`
	Name            string                 `json:"name"`
	Version         string                 `json:"version"`
	Description     string                 `json:"description,omitempty"`
	Capabilities    providers.Capabilities `json:"capabilities"`
	// DefaultTypes are the type globs a clause without types gets, by
	// subject: the first rule whose Match (a glob over the clause subject,
	// '*' any run of characters) matches gives the types. The node answers
	// from these rules alone: the delivery pipeline asks per event and
	// never waits on a process.
	DefaultTypes  []DefaultTypesRule     `json:"defaultTypes,omitempty"`
	SetupFields   []providers.SetupField `json:"setupFields,omitempty"`
	RequiresSetup bool                   `json:"requiresSetup"`
}

// DefaultTypesRule maps clause subjects matching Match to Types.
type DefaultTypesRule struct {
	Match string   `json:"match"`
	Types []string `json:"types"`
}

// Readiness is the answer of readiness: Ready, or the Reason naming the
// fix.
type Readiness = providers.Readiness

// Health is the answer of status.
type Health = providers.Health

// Credentials are the stored setup fields of the adapter (sensitive ones
// included), handed in every call that may need them. Never log them.
type Credentials map[string]string

// Handle is the adapter's own part of a sentinel's handle: what create
// returned, with the cursor the last poll returned. State is opaque to the
// node (a JSON object of at most MaxStateBytes).
type Handle struct {
	RemoteID string         `json:"remoteId,omitempty"`
	Cursor   string         `json:"cursor,omitempty"`
	State    map[string]any `json:"state,omitempty"`
}

// Clause is one match clause of a sentinel: a subject (a trailing '*' is a
// prefix) and optional type globs.
type Clause struct {
	Subject string   `json:"subject"`
	Types   []string `json:"types,omitempty"`
}

// CreateParams are the params of create.
type CreateParams struct {
	SentinelID string             `json:"sentinelId"`
	Match      []Clause           `json:"match"`
	Until      sentinel.Until     `json:"until"`
	Delivery   providers.Delivery `json:"delivery"`
	// CallbackURL is where a push upstream must send its requests (push
	// delivery only): the node's /inbound/sentinel-<key> for this sentinel.
	CallbackURL string      `json:"callbackUrl,omitempty"`
	Credentials Credentials `json:"credentials,omitempty"`
}

// AttachParams are the params of attach (the node's start-up re-attach).
type AttachParams struct {
	SentinelID  string             `json:"sentinelId"`
	Handle      Handle             `json:"handle"`
	Delivery    providers.Delivery `json:"delivery"`
	CallbackURL string             `json:"callbackUrl,omitempty"`
	Credentials Credentials        `json:"credentials,omitempty"`
}

// HandleParams are the params of cancel and status.
type HandleParams struct {
	Handle      Handle      `json:"handle"`
	Credentials Credentials `json:"credentials,omitempty"`
}

// PollParams are the params of poll: the events after Handle.Cursor, at
// most Limit, oldest first.
type PollParams struct {
	Handle      Handle      `json:"handle"`
	Limit       int         `json:"limit"`
	Credentials Credentials `json:"credentials,omitempty"`
}

// PollResult is the answer of poll. Events' ids must be deterministic (a
// re-poll of the same cursor yields the same ids). Cursor is the next
// cursor (opaque, at most MaxCursorBytes). Failure reports a failure the
// adapter handled itself (its backoff lives in Cursor). Malformed names
// upstream items it could not turn into events (never their data).
type PollResult struct {
	Events    []sentinel.Event      `json:"events"`
	Cursor    string                `json:"cursor"`
	Failure   string                `json:"failure,omitempty"`
	Malformed []providers.Malformed `json:"malformed,omitempty"`
}

// InboundParams are the params of parseInbound: one push request to
// /inbound/sentinel-<key>, its raw body (base64 in JSON) and headers.
// Verify the request (a signature over Body) before parsing it.
type InboundParams struct {
	Handle      Handle              `json:"handle"`
	Headers     map[string][]string `json:"headers"`
	Body        []byte              `json:"body"`
	Now         time.Time           `json:"now"`
	Credentials Credentials         `json:"credentials,omitempty"`
}

// InboundResult is the answer of parseInbound: the events of the request
// (none for a ping or an event type the adapter does not produce).
type InboundResult struct {
	Events []sentinel.Event `json:"events"`
}

// ReadinessParams are the params of readiness.
type ReadinessParams struct {
	Credentials Credentials `json:"credentials,omitempty"`
}

// SetupParams are the params of setup: the fields an operator is storing,
// laid over the stored ones (Credentials). The adapter checks them (a token
// that works, a URL it accepts) and answers an error naming the fix when
// they do not; the node stores nothing then.
type SetupParams struct {
	Fields Credentials `json:"fields"`
}

// SetupResult is the answer of setup.
type SetupResult struct {
	Readiness providers.Readiness `json:"readiness"`
}

// CancelRequestParams are the params of the cancelRequest notification.
type CancelRequestParams struct {
	ID json.RawMessage `json:"id"`
}
