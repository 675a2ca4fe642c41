package cluster_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/runtime/cluster"
)

// Elapsed takes the larger of the monotonic and the wall-clock reading: a
// lease sent before a VM suspend (the monotonic clock stopped, the wall
// clock set right on resume) counts as old as the wall clock says.
func TestElapsedTakesTheLargerReading(t *testing.T) {
	then := time.Now()
	require.Equal(t, 2*time.Second, cluster.Elapsed(then, then.Add(2*time.Second)))
	resumed := then.Round(0).Add(time.Hour) // no monotonic reading: the wall clock only
	require.Equal(t, time.Hour, cluster.Elapsed(then, resumed))
	stepped := then.Add(time.Second)
	require.Equal(t, time.Second, cluster.Elapsed(then, stepped), "a wall clock stepped back does not shorten it")
}
