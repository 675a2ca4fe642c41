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

// Validate checks a message before it is stored: a valid recipient
// session id and message id, a known urgency and kind, text and data
// within their caps.
func Validate(m *sentinel.Message) error {
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

// SentinelMessage builds the inbox message of a delivered sentinel event,
// as docs/api.md describes it (the paragraph on inbox messages, and "One
// message per event"). It is from system, of kind notice, at the target's
// urgency. Its correlationId is sentinel:<event subject> and its text
// "[<scheme>] <summary>". Its data is the event trimmed to the 16 KiB cap
// (TrimEvent). The id is derived from the recipient session and the event
// id, not from the sentinel: two sentinels of one session that match one
// event map to one message (EventMessageID, AppendEvent). Origin names the
// sentinel that wrote it.
func SentinelMessage(sentinelID, provider, to string, urgency sentinel.Urgency, ev *sentinel.Event, ts string) sentinel.Message {
	scheme := ev.Scheme()
	if scheme == "" {
		scheme = provider
	}
	return sentinel.Message{
		ID:            EventMessageID(to, ev.ID, ""),
		Ts:            ts,
		To:            to,
		From:          sentinel.MessageFrom{Relation: RelationSystem},
		Kind:          KindNotice,
		Urgency:       urgency,
		CorrelationID: "sentinel:" + ev.Subject,
		Text:          "[" + scheme + "] " + ev.Summary,
		Data:          TrimEvent(ev),
		Source:        "sentinel",
		Origin:        sentinelID,
	}
}

// TrimEvent encodes the event to fit MaxDataBytes. It tries the whole
// event, then the event with data {"truncated":true}, then an identity
// stub (id, type, subject and summary, clipped, with truncated true).
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
