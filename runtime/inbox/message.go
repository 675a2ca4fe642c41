package inbox

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/agentproto/sentinel"
)

// Relations of a message's sender.
const (
	RelationChild   = "child"
	RelationParent  = "parent"
	RelationSibling = "sibling"
	RelationHuman   = "human"
	RelationSystem  = "system"
	// RelationPrincipal is a message a named token (not the operator)
	// posted with no session of its own: From.Principal names it.
	RelationPrincipal = "principal"
)

// Kinds of a message.
const (
	KindReport   = "report"
	KindQuestion = "question"
	KindBlocker  = "blocker"
	KindDone     = "done"
	KindNotice   = "notice"
)

// MaxDataBytes caps a message's data (AIP-46 MAX_MESSAGE_DATA_BYTES).
const MaxDataBytes = 16384

// MaxTextBytes caps a message's text.
const MaxTextBytes = 64 * 1024

// From is the computed sender of a message; callers never set it.
// Principal names the named token that posted it (never for the
// operator's own token).
type From struct {
	Relation  string `json:"relation"`
	SessionID string `json:"sessionId,omitempty"`
	Label     string `json:"label,omitempty"`
	Principal string `json:"principal,omitempty"`
}

// Message is an AIP-46 session message. Seq is the inbox stream sequence,
// filled on read (it is not part of the stored body).
type Message struct {
	ID            string           `json:"id"`
	Seq           uint64           `json:"seq,omitempty"`
	Ts            string           `json:"ts"`
	To            string           `json:"to"`
	From          From             `json:"from"`
	Kind          string           `json:"kind"`
	Urgency       sentinel.Urgency `json:"urgency"`
	CorrelationID string           `json:"correlationId,omitempty"`
	ReplyTo       string           `json:"replyTo,omitempty"`
	Text          string           `json:"text"`
	Data          json.RawMessage  `json:"data,omitempty"`
	// Source and Origin record what produced the message (sentinel,
	// session-follow, api) and its origin id.
	Source string `json:"source,omitempty"`
	Origin string `json:"origin,omitempty"`
}

// Validate checks a message before it is stored.
func (m *Message) Validate() error {
	switch {
	case !sentinel.ValidSessionID(m.To):
		return sentinel.Errorf(sentinel.CodeInvalidSessionID, "recipient %q is not a valid session id", m.To)
	case m.ID == "" || !validToken(m.ID):
		return sentinel.Errorf(sentinel.CodeInvalidInput, "message id %q is invalid", m.ID)
	case !m.Urgency.Valid():
		return sentinel.Errorf(sentinel.CodeInvalidUrgency, "urgency %q is not one of fyi, next-turn, steer, interrupt", m.Urgency)
	case len(m.Text) > MaxTextBytes:
		return sentinel.Errorf(sentinel.CodeInvalidInput, "message text is longer than %d bytes", MaxTextBytes)
	case len(m.Data) > MaxDataBytes:
		return sentinel.Errorf(sentinel.CodeInvalidInput, "message data is larger than %d bytes", MaxDataBytes)
	}
	switch m.Kind {
	case KindReport, KindQuestion, KindBlocker, KindDone, KindNotice:
	default:
		return sentinel.Errorf(sentinel.CodeInvalidInput, "kind %q is not one of report, question, blocker, done, notice", m.Kind)
	}
	return nil
}

func validToken(s string) bool {
	if len(s) > 128 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// DeterministicID derives a message id from parts, so a redelivered source
// (a sentinel event, a digest) maps to the same message.
func DeterministicID(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s|", len(p), p)
	}
	return "msg_" + hex.EncodeToString(h.Sum(nil)[:12])
}

// SentinelMessage builds the inbox message of a delivered sentinel event
// (REFERENCE-NOTES 6.5): from system, kind notice, the target's urgency,
// correlationId sentinel:<event subject>, text "[<scheme>] <summary>", and
// data = the event trimmed to the 16 KiB cap (the full event; else the
// event with data {truncated:true}; else an identity stub). The id is
// derived from (recipient session, event id), not from the sentinel: two
// sentinels of one session that match one event map to one message
// (EventMessageID, AppendEvent); Origin names the sentinel that wrote it.
func SentinelMessage(sentinelID, provider, to string, urgency sentinel.Urgency, ev *sentinel.Event, ts string) Message {
	scheme := ev.Scheme()
	if scheme == "" {
		scheme = provider
	}
	return Message{
		ID:            EventMessageID(to, ev.ID, ""),
		Ts:            ts,
		To:            to,
		From:          From{Relation: RelationSystem},
		Kind:          KindNotice,
		Urgency:       urgency,
		CorrelationID: "sentinel:" + ev.Subject,
		Text:          "[" + scheme + "] " + ev.Summary,
		Data:          TrimEvent(ev),
		Source:        "sentinel",
		Origin:        sentinelID,
	}
}

// TrimEvent encodes the event to fit MaxDataBytes by the spec's steps.
func TrimEvent(ev *sentinel.Event) json.RawMessage {
	if raw, err := json.Marshal(ev); err == nil && len(raw) <= MaxDataBytes {
		return raw
	}
	cp := *ev
	cp.Data = json.RawMessage(`{"truncated":true}`)
	if raw, err := json.Marshal(&cp); err == nil && len(raw) <= MaxDataBytes {
		return raw
	}
	stub := map[string]any{"id": clip(ev.ID, 256), "type": clip(ev.Type, 256), "subject": clip(ev.Subject, 512), "summary": clip(ev.Summary, 4096), "truncated": true}
	raw, _ := json.Marshal(stub)
	return raw
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
