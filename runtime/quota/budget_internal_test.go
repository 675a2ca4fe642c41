package quota

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestBudgetMerge(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name      string
		have, got Budget
		want      Budget
		changed   bool
	}{
		{"lower remaining in the window wins", Budget{Limit: 100, Remaining: 50, Reset: t0}, Budget{Limit: 100, Remaining: 40, Used: 60, Reset: t0},
			Budget{Limit: 100, Remaining: 40, Used: 60, Reset: t0}, true},
		{"a higher remaining in the window is stale", Budget{Limit: 100, Remaining: 40, Reset: t0}, Budget{Limit: 100, Remaining: 45, Reset: t0},
			Budget{Limit: 100, Remaining: 40, Reset: t0}, false},
		{"a later window replaces", Budget{Limit: 100, Remaining: 3, Reset: t0}, Budget{Limit: 100, Remaining: 99, Reset: t0.Add(time.Hour)},
			Budget{Limit: 100, Remaining: 99, Reset: t0.Add(time.Hour)}, true},
		{"an earlier window is stale", Budget{Limit: 100, Remaining: 99, Reset: t0.Add(time.Hour)}, Budget{Limit: 100, Remaining: 3, Reset: t0},
			Budget{Limit: 100, Remaining: 99, Reset: t0.Add(time.Hour)}, false},
		{"the later pause wins", Budget{PausedUntil: t0}, Budget{PausedUntil: t0.Add(time.Minute), Backoff: time.Minute},
			Budget{PausedUntil: t0.Add(time.Minute), Backoff: time.Minute}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.have
			require.Equal(t, tc.changed, b.merge(tc.got))
			require.Equal(t, tc.want, b)
		})
	}
}

func TestReserve(t *testing.T) {
	require.Equal(t, 500, (&Budget{Limit: 5000}).reserve(0.1, 10))
	require.Equal(t, 10, (&Budget{Limit: 60}).reserve(0.1, 10))
	require.Equal(t, 5, (&Budget{Limit: 5}).reserve(0.1, 10), "never more than the limit")
}
