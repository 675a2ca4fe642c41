package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/agentproto/sentinel/ingress/api"
)

// renderMessages renders inbox messages for a model (REFERENCE-NOTES 6.2):
// a one-line preamble, then per message an <agentproto-message> element
// with its body; tag-like sequences inside a body are escaped.
func renderMessages(msgs []api.Message) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d message(s) arrived in this session's inbox while you were away (from sentinel watches, follows or people). "+
		"Each is an <agentproto-message>; act on them if needed.\n", len(msgs))
	for _, m := range msgs {
		b.WriteString(`<agentproto-message id="` + m.ID + `" from="` + m.From.Relation + `"`)
		if m.From.SessionID != "" {
			b.WriteString(` session="` + m.From.SessionID + `"`)
		}
		if m.From.Label != "" {
			b.WriteString(` label="` + escapeAttr(m.From.Label) + `"`)
		}
		b.WriteString(` kind="` + m.Kind + `" urgency="` + string(m.Urgency) + `"`)
		if m.ReplyTo != "" {
			b.WriteString(` reply-to="` + m.ReplyTo + `"`)
		}
		if m.CorrelationID != "" && m.CorrelationID != m.ID {
			b.WriteString(` correlation="` + escapeAttr(m.CorrelationID) + `"`)
		}
		b.WriteString(">\n<body>" + escapeBody(m.Text) + "</body>\n</agentproto-message>\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

func escapeBody(s string) string {
	r := strings.NewReplacer("<agentproto-message", "&lt;agentproto-message", "</agentproto-message", "&lt;/agentproto-message",
		"<body", "&lt;body", "</body", "&lt;/body")
	return r.Replace(s)
}

func escapeAttr(s string) string { return strings.ReplaceAll(s, `"`, "&quot;") }

func writeJSONLine(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
