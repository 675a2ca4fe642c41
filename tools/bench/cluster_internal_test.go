package bench

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMedianAndMax(t *testing.T) {
	for _, tc := range []struct {
		name     string
		xs       []float64
		med, max float64
	}{
		{name: "none", xs: nil, med: 0, max: 0},
		{name: "one", xs: []float64{4}, med: 4, max: 4},
		{name: "odd", xs: []float64{9, 1, 5, 3, 7}, med: 5, max: 9},
		{name: "even", xs: []float64{4, 1, 3, 2}, med: 2.5, max: 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.InDelta(t, tc.med, median(tc.xs), 1e-9)
			require.InDelta(t, tc.max, maxOf(tc.xs), 1e-9)
		})
	}
}

// blankInherited empties the operator's AGENTPROTO_* settings the bench
// does not set itself, and keeps the ones it sets.
func TestBlankInherited(t *testing.T) {
	t.Setenv("AGENTPROTO_NATS_URL", "nats://elsewhere:4222")
	t.Setenv("AGENTPROTO_HOME", "/somewhere")
	t.Setenv("AGENTPROTO_TOKEN", "the-operators-own-token-xxxxxxxxxxxxxxxx")
	env := blankInherited([]string{"AGENTPROTO_TOKEN=bench"})
	require.Contains(t, env, "AGENTPROTO_NATS_URL=")
	require.Contains(t, env, "AGENTPROTO_TOKEN=bench")
	require.NotContains(t, env, "AGENTPROTO_TOKEN=")
	require.NotContains(t, env, "AGENTPROTO_HOME=", "startBinary sets the home")
}
