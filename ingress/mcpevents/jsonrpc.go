package mcpevents

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
)

// ExtensionID is the extension's identifier.
const ExtensionID = "io.modelcontextprotocol/events"

// MinRevision is the first protocol revision the extension is defined for.
const MinRevision = "2026-07-28"

// LegacyRevision is the initialize-handshake revision ChatGPT, the only
// shipping MCP Events client, speaks: its events/* requests carry no
// revision in _meta. They are served on a connection (stdio) or session
// (HTTP: Mcp-Session-Id, or an Mcp-Protocol-Version header naming it)
// that initialized with it; events/* of any other earlier revision stay
// Method not found, as the SEP says.
const LegacyRevision = "2025-03-26"

// methodInitialize is the handshake of the earlier revisions.
const methodInitialize = "initialize"

// initializeVersion returns the protocolVersion of initialize params.
func initializeVersion(params json.RawMessage) string {
	var p struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	_ = json.Unmarshal(params, &p)
	return p.ProtocolVersion
}

// MetaSubscriptionID is the _meta key routing push notifications.
const MetaSubscriptionID = "io.modelcontextprotocol/subscriptionId"

const metaProtocolVersion = "io.modelcontextprotocol/protocolVersion"

// Method names.
const (
	MethodList        = "events/list"
	MethodPoll        = "events/poll"
	MethodStream      = "events/stream"
	MethodSubscribe   = "events/subscribe"
	MethodUnsubscribe = "events/unsubscribe"
	methodDiscover    = "server/discover"
	methodCancelled   = "notifications/cancelled"
)

// Request is the envelope of one JSON-RPC message as the layer reads it.
type Request struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params,omitempty"`
}

// IsRequest reports whether the message expects a response (has an id).
func (r *Request) IsRequest() bool {
	id := bytes.TrimSpace(r.ID)
	return len(id) > 0 && !bytes.Equal(id, []byte("null"))
}

// Revision returns the protocol revision the request declares in
// params._meta ("" for none).
func (r *Request) Revision() string {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(r.Params, &p) != nil {
		return ""
	}
	var v string
	_ = json.Unmarshal(p.Meta[metaProtocolVersion], &v)
	return v
}

// Modern reports whether a revision is 2026-07-28 or later (revisions are
// dates, so they compare as strings).
func Modern(revision string) bool {
	return len(revision) == len(MinRevision) && revision >= MinRevision
}

// IsEvents reports whether a method is one of this extension's.
func IsEvents(method string) bool { return strings.HasPrefix(method, "events/") }

// parse decodes one message; ok is false for a batch or non-JSON.
func parse(msg []byte) (*Request, bool) {
	msg = bytes.TrimSpace(msg)
	if len(msg) == 0 || msg[0] != '{' {
		return nil, false
	}
	var r Request
	if json.Unmarshal(msg, &r) != nil {
		return nil, false
	}
	return &r, true
}

// Dispatcher handles one events/* request of a modern revision. It calls
// emit for every message the request produces, in order: the
// notifications of a stream, then the response (none when ctx ended
// first: a cancelled stream gets no final frame).
type Dispatcher interface {
	Dispatch(ctx context.Context, msg []byte, req *Request, emit func(msg []byte) error)
}

// response builds a JSON-RPC result message.
func response(id json.RawMessage, result any) []byte {
	raw, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  any             `json:"result"`
	}{"2.0", id, result})
	if err != nil {
		return errorResponse(id, &RPCError{Code: CodeInternal, Message: "InternalError", Data: map[string]any{"reason": "the result could not be encoded"}})
	}
	return raw
}

// errorResponse builds a JSON-RPC error message.
func errorResponse(id json.RawMessage, e *RPCError) []byte {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	raw, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *RPCError       `json:"error"`
	}{"2.0", id, e})
	return raw
}

// notification builds a JSON-RPC notification whose params carry the
// stream's subscription id in _meta.
func notification(method string, params any, subID json.RawMessage) ([]byte, error) {
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		obj = map[string]json.RawMessage{}
	}
	meta, _ := json.Marshal(map[string]json.RawMessage{MetaSubscriptionID: subID})
	obj["_meta"] = meta
	return json.Marshal(struct {
		JSONRPC string                     `json:"jsonrpc"`
		Method  string                     `json:"method"`
		Params  map[string]json.RawMessage `json:"params"`
	}{"2.0", method, obj})
}

// isResponse reports whether a message is a response (result or error,
// no method).
func isResponse(msg []byte) bool {
	var m struct {
		Method string          `json:"method"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	return json.Unmarshal(msg, &m) == nil && m.Method == "" && (m.Result != nil || m.Error != nil)
}

// errorCode returns the error code of a response message (0 for none).
func errorCode(msg []byte) int {
	var m struct {
		Error *RPCError `json:"error"`
	}
	if json.Unmarshal(msg, &m) != nil || m.Error == nil {
		return 0
	}
	return m.Error.Code
}

// withExtension adds the extension to the capabilities of a
// server/discover or initialize response message, in both spellings:
// capabilities.extensions[ExtensionID] (the SEP's) and a top-level
// capabilities.events (what ChatGPT reads); unchanged when it has no
// result.
func withExtension(msg []byte) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(msg, &m) != nil || m["result"] == nil {
		return msg
	}
	var result map[string]json.RawMessage
	if json.Unmarshal(m["result"], &result) != nil {
		return msg
	}
	var caps map[string]json.RawMessage
	if json.Unmarshal(result["capabilities"], &caps) != nil || caps == nil {
		caps = map[string]json.RawMessage{}
	}
	var exts map[string]json.RawMessage
	if json.Unmarshal(caps["extensions"], &exts) != nil || exts == nil {
		exts = map[string]json.RawMessage{}
	}
	exts[ExtensionID] = json.RawMessage(`{}`)
	caps["events"] = json.RawMessage(`{}`)
	var err error
	if caps["extensions"], err = json.Marshal(exts); err != nil {
		return msg
	}
	if result["capabilities"], err = json.Marshal(caps); err != nil {
		return msg
	}
	if m["result"], err = json.Marshal(result); err != nil {
		return msg
	}
	out, err := json.Marshal(m)
	if err != nil {
		return msg
	}
	return out
}

type principalKey struct{}

// WithPrincipal returns ctx carrying the authenticated principal.
func WithPrincipal(ctx context.Context, p string) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom returns the principal ctx carries ("" for none).
func PrincipalFrom(ctx context.Context) string {
	p, _ := ctx.Value(principalKey{}).(string)
	return p
}
