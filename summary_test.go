package sentinel_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
)

func TestClipUTF8(t *testing.T) {
	cases := []struct {
		name string
		in   string
		n    int
		want string
	}{
		{name: "short stays", in: "hello", n: 10, want: "hello"},
		{name: "exact stays", in: "hello", n: 5, want: "hello"},
		{name: "ascii clipped with ellipsis", in: "hello world", n: 8, want: "hello…"},
		{name: "never splits a rune", in: "aé日本語", n: 8, want: "aé…"},
		{name: "tiny limit", in: "日本", n: 2, want: ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := sentinel.ClipUTF8(tc.in, tc.n)
			require.Equal(t, tc.want, got)
			require.LessOrEqual(t, len(got), tc.n)
			require.True(t, utf8.ValidString(got))
		})
	}
}

func TestClipSummaryKeepsTheCallersEvent(t *testing.T) {
	ev := sentinel.Event{ID: "evt_1", Summary: strings.Repeat("界", 100_000)}
	clipped := sentinel.ClipSummary(ev)
	require.LessOrEqual(t, len(clipped.Summary), sentinel.MaxSummaryBytes)
	require.True(t, utf8.ValidString(clipped.Summary))
	require.True(t, strings.HasSuffix(clipped.Summary, "…"))
	require.Len(t, ev.Summary, 300_000, "the caller's event is unchanged")
}
