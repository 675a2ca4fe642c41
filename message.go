package sentinel

import "encoding/json"

// MessageFrom is the computed sender of an inbox message; callers never
// set it. Relation is human for the operator's token without a session,
// principal for a named token without one (Principal names it), else the
// caller session's relation to the recipient. Principal is set whenever a
// named token posted (never for the operator's own token).
type MessageFrom struct {
	Relation  string `json:"relation"`
	SessionID string `json:"sessionId,omitempty"`
	Label     string `json:"label,omitempty"`
	Principal string `json:"principal,omitempty"`
}

// Message is an AIP-46 inbox message, as stored in a session's inbox and
// as every surface shows it. Seq is the inbox stream sequence: it is set
// when the message is read, and stored as 0.
type Message struct {
	ID            string          `json:"id"`
	Seq           uint64          `json:"seq"`
	Ts            string          `json:"ts"`
	To            string          `json:"to"`
	From          MessageFrom     `json:"from"`
	Kind          string          `json:"kind"`
	Urgency       Urgency         `json:"urgency"`
	CorrelationID string          `json:"correlationId,omitempty"`
	ReplyTo       string          `json:"replyTo,omitempty"`
	Text          string          `json:"text"`
	Data          json.RawMessage `json:"data,omitempty"`
	// Source and Origin record what produced the message (sentinel,
	// session-follow, api) and its origin id.
	Source string `json:"source,omitempty"`
	Origin string `json:"origin,omitempty"`
}

// SendMessage is the body of POST /sessions/{id}/messages and what the
// inboxes send. The sender is computed by the node, never taken from the
// caller.
type SendMessage struct {
	Text          string          `json:"text"`
	Kind          string          `json:"kind,omitempty"`
	Urgency       Urgency         `json:"urgency,omitempty"`
	CorrelationID string          `json:"correlationId,omitempty"`
	ReplyTo       string          `json:"replyTo,omitempty"`
	Data          json.RawMessage `json:"data,omitempty"`
}

// InboxQuery selects messages of one inbox (from a read's query
// parameters, or an MCP tool's arguments: it has no JSON body).
type InboxQuery struct {
	SessionID string
	// After is the exclusive sequence to read after; nil reads after the
	// session's read cursor.
	After         *uint64
	Limit         int
	CorrelationID string
	// Ack advances the read cursor past the returned page (only without a
	// correlation filter, so no unmatched message is skipped).
	Ack bool
	// Cursor names another cursor of the session to read after and
	// advance instead of its read cursor ("" the read cursor): a path that
	// delivers on its own (the Claude Code channel's "channel") keeps its
	// position without moving what the hooks inject. 1-32 of [a-z0-9_-].
	Cursor string
}
