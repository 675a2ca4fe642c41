package cli

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agentproto/sentinel"
)

// messageLine renders one inbox message as the single line a monitor
// prints (`sentinel inbox --follow`):
//
//	[urgency] "summary" — subject (sentinel, seq N)
//
// For a sentinel's message the summary and subject are the event's (from
// the message data) and sentinel its id; for any other message the summary
// is the message text, the subject its correlation id and the sender takes
// the sentinel's place (`from child:s2`). The summary is written as a
// quoted string with every control, format (bidi) and invalid character
// escaped (strconv.Quote), and clipped to 300 runes; the subject and the
// other fields are escaped the same way without quotes, so whatever PR text
// says it stays on its one line inside its quotes and cannot forge another
// line or field.
func messageLine(m sentinel.Message) string {
	summary, subject, origin := m.Text, m.CorrelationID, ""
	if subject == m.ID {
		subject = "" // a message is its own correlation by default
	}
	if m.Source == "sentinel" {
		var ev struct {
			Subject string `json:"subject"`
			Summary string `json:"summary"`
		}
		if json.Unmarshal(m.Data, &ev) == nil {
			if ev.Summary != "" {
				summary = ev.Summary
			}
			if ev.Subject != "" {
				subject = ev.Subject
			}
		}
		subject = strings.TrimPrefix(subject, "sentinel:")
		origin = m.Origin
	} else {
		origin = "from " + m.From.Relation
		if m.From.SessionID != "" {
			origin += ":" + m.From.SessionID
		} else if m.From.Principal != "" {
			origin += ":" + m.From.Principal
		}
	}
	if subject == "" {
		subject = "-"
	}
	var b strings.Builder
	b.WriteString("[" + lineField(string(m.Urgency)) + "] ")
	b.WriteString(strconv.Quote(clipRunes(summary, 300)))
	b.WriteString(" — " + lineField(clipRunes(subject, 200)))
	b.WriteString(" (" + lineField(origin) + ", seq " + strconv.FormatUint(m.Seq, 10) + ")")
	return b.String()
}

// lineField escapes a field of a monitor line: what strconv.Quote would
// escape (controls, line breaks, format characters such as bidi overrides,
// invalid UTF-8, backslashes and quotes), without the surrounding quotes.
func lineField(s string) string {
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
}

// clipRunes keeps at most n runes of s (valid UTF-8 or not), adding an
// ellipsis when it cut.
func clipRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i, count := 0, 0
	for i < len(s) && count < n-1 {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		count++
	}
	return s[:i] + "…"
}
