package freeport

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The ports are distinct and, where the kernel names its ephemeral range,
// below it (where no other process's :0 lands).
func TestTakeBelowEphemeral(t *testing.T) {
	ports, err := Take(6)
	require.NoError(t, err)
	require.Len(t, ports, 6)
	seen := map[int]bool{}
	lo, hi := belowEphemeral()
	for _, p := range ports {
		require.False(t, seen[p], "port %d twice", p)
		seen[p] = true
		if lo < hi {
			require.GreaterOrEqual(t, p, lo)
			require.Less(t, p, hi)
		}
	}
}
