package chaos

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// history builds synthetic sends of one sentinel in session s1, one per
// outcome given, indexed in order.
func history(sentinel string, outcomes ...Outcome) []Send {
	var out []Send
	for i, o := range outcomes {
		out = append(out, Send{ID: sentinel + "-" + string(rune('a'+i)), Sentinel: sentinel, Session: "s1", Path: "push",
			Index: i, Outcome: o, Done: time.Unix(int64(i), 0)})
	}
	return out
}

func inbox(session string, ids ...string) []Message {
	var out []Message
	for i, id := range ids {
		out = append(out, Message{Session: session, Seq: uint64(i + 1), EventID: id})
	}
	return out
}

func findingClasses(v Verdict) []Class {
	var out []Class
	for _, f := range v.Findings {
		out = append(out, f.Class)
	}
	return out
}

func TestCheckEveryAcceptedEventOnceInOrderIsValid(t *testing.T) {
	sends := history("x", Accepted, Accepted, Accepted)
	v := Check(sends, inbox("s1", "x-a", "x-b", "x-c"))
	require.True(t, v.Valid, "%+v", v)
	require.Equal(t, Counts{Sent: 3, Accepted: 3, OK: 3, Messages: 3}, v.Counts)
	require.Empty(t, v.Findings)
}

func TestCheckDetectsEachClass(t *testing.T) {
	cases := []struct {
		name  string
		sends []Send
		msgs  []Message
		want  Counts
		class Class
	}{
		{"lost", history("x", Accepted, Accepted), inbox("s1", "x-a"),
			Counts{Sent: 2, Accepted: 2, OK: 1, Lost: 1, Messages: 1}, Lost},
		{"duplicated accepted", history("x", Accepted), inbox("s1", "x-a", "x-a"),
			Counts{Sent: 1, Accepted: 1, Duplicated: 1, Messages: 2}, Duplicated},
		{"duplicated indeterminate", history("x", Unknown), inbox("s1", "x-a", "x-a"),
			Counts{Sent: 1, Duplicated: 1, Messages: 2}, Duplicated},
		{"unexpected unknown id", history("x", Accepted), inbox("s1", "x-a", "nobody-sent-this"),
			Counts{Sent: 1, Accepted: 1, OK: 1, Unexpected: 1, Messages: 2}, Unexpected},
		{"unexpected refused send delivered", history("x", Refused), inbox("s1", "x-a"),
			Counts{Sent: 1, Unexpected: 1, Messages: 1}, Unexpected},
		{"unexpected in another session", history("x", Accepted), append(inbox("s1", "x-a"), Message{Session: "s2", Seq: 1, EventID: "x-a"}),
			Counts{Sent: 1, Accepted: 1, OK: 1, Unexpected: 1, Messages: 2}, Unexpected},
		{"reordered", history("x", Accepted, Accepted, Accepted), inbox("s1", "x-b", "x-a", "x-c"),
			Counts{Sent: 3, Accepted: 3, OK: 3, Reordered: 1, Messages: 3}, Reordered},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := Check(c.sends, c.msgs)
			require.False(t, v.Valid)
			require.Equal(t, c.want, v.Counts)
			require.Equal(t, []Class{c.class}, findingClasses(v))
		})
	}
}

// An answer lost: delivered once or not at all is fine; refused and
// absent is fine; neither disturbs the order check of accepted sends.
func TestCheckIndeterminateAndRefusedAreFine(t *testing.T) {
	sends := history("x", Accepted, Unknown, Unknown, Refused, Accepted)
	// x-b (unknown) arrives late, after x-e: not an order violation, as
	// its send was not awaited to completion.
	v := Check(sends, inbox("s1", "x-a", "x-e", "x-b"))
	require.True(t, v.Valid, "%+v", v)
	require.Equal(t, Counts{Sent: 5, Accepted: 2, OK: 2, IndeterminatePresent: 1, IndeterminateAbsent: 1, RefusedAbsent: 1, Messages: 3}, v.Counts)
}

// Order is per sentinel: two sentinels interleaved in one session are in
// order as long as each one's events are.
func TestCheckOrderIsPerSentinel(t *testing.T) {
	sends := append(history("x", Accepted, Accepted), history("y", Accepted, Accepted)...)
	v := Check(sends, inbox("s1", "y-a", "x-a", "y-b", "x-b"))
	require.True(t, v.Valid, "%+v", v)
	v = Check(sends, inbox("s1", "y-a", "x-b", "y-b", "x-a"))
	require.Equal(t, 1, v.Counts.Reordered)
	require.False(t, v.Valid)
}

// A duplicate's second copy does not count as an order violation too.
func TestCheckDuplicateLaterIsNotAlsoReordered(t *testing.T) {
	sends := history("x", Accepted, Accepted)
	v := Check(sends, inbox("s1", "x-a", "x-b", "x-a"))
	require.Equal(t, Counts{Sent: 2, Accepted: 2, OK: 1, Duplicated: 1, Messages: 3}, v.Counts)
}

func TestCheckCapsFindings(t *testing.T) {
	var outcomes []Outcome
	for range MaxFindings + 10 {
		outcomes = append(outcomes, Accepted)
	}
	v := Check(history("x", outcomes...), nil)
	require.Equal(t, MaxFindings+10, v.Counts.Lost)
	require.Len(t, v.Findings, MaxFindings)
}
