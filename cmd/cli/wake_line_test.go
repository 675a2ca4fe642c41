package cli

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/agentproto/sentinel"
	"github.com/stretchr/testify/require"
)

// FuzzMessageLine: whatever a message carries, its monitor line is one
// line of printable text (no control or format character) whose quoted
// summary reads back as the (clipped) summary.
func FuzzMessageLine(f *testing.F) {
	f.Add("CI failed\n[interrupt] \"x\" — y (sen_z, seq 9)", "github:o/r#1", "sen_1")
	f.Add("\u202eevil\x1b[2J\r\x00", "", "")
	f.Add(string([]byte{0xff, 0xfe}), "a\nb", "c\td")
	f.Fuzz(func(t *testing.T, summary, subject, origin string) {
		data, _ := json.Marshal(map[string]string{"summary": summary, "subject": subject})
		for _, m := range []sentinel.Message{
			{ID: "msg_1", Seq: 7, Urgency: "steer", Source: "sentinel", Origin: origin, Data: data},
			{ID: "msg_2", Seq: 8, Urgency: "fyi", Text: summary, CorrelationID: subject, From: sentinel.MessageFrom{Relation: "child", SessionID: origin}},
		} {
			line := messageLine(m)
			for _, r := range line {
				require.Falsef(t, r == '\n' || r == '\r' || unicode.IsControl(r) || unicode.Is(unicode.Cf, r), "line %q has %U", line, r)
			}
			require.True(t, strings.HasSuffix(line, ", seq "+strconv.FormatUint(m.Seq, 10)+")"), line)
			q := strings.TrimPrefix(line, "["+string(m.Urgency)+"] ")
			got, err := strconv.QuotedPrefix(q)
			require.NoError(t, err, line)
			back, err := strconv.Unquote(got)
			require.NoError(t, err)
			want := summary
			if m.Source == "sentinel" { // what the data carries, after JSON
				var ev struct{ Summary string }
				require.NoError(t, json.Unmarshal(data, &ev))
				want = ev.Summary
			}
			require.Equal(t, strings.ToValidUTF8(clipRunes(want, 300), "\uFFFD"), strings.ToValidUTF8(back, "\uFFFD"))
		}
	})
}

func TestMessageLineShapes(t *testing.T) {
	ev, _ := json.Marshal(map[string]string{"summary": "CI passed", "subject": "github:acme/widgets#7"})
	require.Equal(t, `[next-turn] "CI passed" — github:acme/widgets#7 (sen_1, seq 3)`,
		messageLine(sentinel.Message{ID: "msg_a", Seq: 3, Urgency: "next-turn", Source: "sentinel", Origin: "sen_1", Text: "[github] CI passed", Data: ev, CorrelationID: "sentinel:github:acme/widgets#7"}))
	require.Equal(t, `[fyi] "done" — thread-1 (from child:s2, seq 4)`,
		messageLine(sentinel.Message{ID: "msg_b", Seq: 4, Urgency: "fyi", Text: "done", CorrelationID: "thread-1", From: sentinel.MessageFrom{Relation: "child", SessionID: "s2"}}))
	require.Equal(t, `[fyi] "hi" — - (from human, seq 5)`,
		messageLine(sentinel.Message{ID: "msg_c", Seq: 5, Urgency: "fyi", Text: "hi", CorrelationID: "msg_c", From: sentinel.MessageFrom{Relation: "human"}}))
}
