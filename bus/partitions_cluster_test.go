package bus_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/bus"
	"github.com/agentproto/sentinel/bus/bustest"
)

// Every node of a cluster uses one partition count: a node configured
// with another is refused, whatever order the nodes start in.
func TestClusterRefusesADifferentPartitionCount(t *testing.T) {
	envs := bustest.StartCluster(t, 3)
	cfg := envs[0].Bus.Cfg
	cfg.Partitions = 8
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, err := bus.Open(ctx, envs[1].NC, cfg)
	require.ErrorContains(t, err, "bus.partitions=4")
	cfg.Partitions = 4
	_, err = bus.Open(ctx, envs[2].NC, cfg)
	require.NoError(t, err, "the same count is accepted")
}
