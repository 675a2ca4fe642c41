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
