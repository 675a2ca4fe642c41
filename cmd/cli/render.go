package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agentproto/sentinel"
)

// printRaw prints a node's JSON answer indented (as it is when it is not
// JSON).
func (o *ClientOptions) printRaw(raw []byte) {
	var buf bytes.Buffer
	if json.Indent(&buf, bytes.TrimSpace(raw), "", "  ") != nil {
		buf.Reset()
		buf.Write(bytes.TrimSpace(raw))
	}
	buf.WriteByte('\n')
	_, _ = o.IO.Out.Write(buf.Bytes())
}

// printJSON prints v as indented JSON.
func (o *ClientOptions) printJSON(v any) {
	raw, _ := json.Marshal(v)
	o.printRaw(raw)
}

// table returns a tabwriter for aligned human output.
func (o *ClientOptions) table() *tabwriter.Writer {
	return tabwriter.NewWriter(o.IO.Out, 0, 4, 2, ' ', 0)
}

// row writes tab-separated cells, "-" for an empty cell.
func row(w io.Writer, cells ...string) {
	for i, c := range cells {
		if c == "" {
			c = "-"
		}
		c = strings.ReplaceAll(strings.ReplaceAll(c, "\t", " "), "\n", " ")
		if i > 0 {
			_, _ = io.WriteString(w, "\t")
		}
		_, _ = io.WriteString(w, c)
	}
	_, _ = io.WriteString(w, "\n")
}

// kv writes key/value pairs aligned, skipping empty values.
func (o *ClientOptions) kv(pairs ...string) {
	w := o.table()
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] == "" {
			continue
		}
		fmt.Fprintf(w, "%s:\t%s\n", pairs[i], pairs[i+1])
	}
	_ = w.Flush()
}

// msTime renders epoch milliseconds in local time ("-" for zero).
func msTime(ms int64) string {
	if ms <= 0 {
		return ""
	}
	return time.UnixMilli(ms).Local().Format("2006-01-02 15:04:05")
}

// isoTime renders an RFC 3339 timestamp in local time, or as given.
func isoTime(s string) string {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.Local().Format("2006-01-02 15:04:05")
	}
	return s
}

// subjects joins a sentinel's clause subjects.
func subjects(m []sentinel.Clause) string {
	out := make([]string, 0, len(m))
	for _, c := range m {
		out = append(out, c.Subject)
	}
	return strings.Join(out, ",")
}

// untilText renders an until condition.
func untilText(u sentinel.Until) string {
	switch u.Kind {
	case sentinel.UntilAt:
		return "at " + msTime(u.Ms)
	case sentinel.UntilCount:
		return fmt.Sprintf("count %d", u.N)
	}
	return u.Kind
}

// targetText renders a delivery target.
func targetText(t sentinel.Target) string {
	if t.Kind == sentinel.TargetSession {
		return t.SessionID + " (" + string(t.Urgency) + ")"
	}
	if t.Kind == sentinel.TargetMCPEvents {
		return t.Kind + " (" + t.Mode + ")"
	}
	return t.Kind
}

// clip shortens s to n runes with an ellipsis.
func clip(s string, n int) string {
	r := []rune(strings.Join(strings.Fields(s), " "))
	if len(r) <= n {
		return string(r)
	}
	return string(r[:n-1]) + "…"
}
