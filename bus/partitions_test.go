package bus_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/bus"
	"github.com/agentproto/sentinel/bus/bustest"
)

// A clustered node that opens while another node is midway through
// creating the events stream's consumers opens, whichever of the two
// writes a consumer first, instead of refusing to start with "the
// cluster runs with bus.partitions=<fewer>": nodes of a cluster start
// together, and the count is pinned in the setup bucket, not read off
// the consumers. Each order is scripted: the other node's creates before
// the open, after it, and at the same time.
func TestClusteredOpenWhileAnotherNodeCreatesTheConsumers(t *testing.T) {
	envs := bustest.StartCluster(t, 3)
	a := envs[0].Bus
	missing := []int{2, 3} // of 4: a node midway
	createMissing := func(ctx context.Context) error {
		for _, p := range missing {
			if _, err := a.EventsStream().CreateOrUpdateConsumer(ctx, a.ConsumerConfig(p)); err != nil {
				return err
			}
		}
		return nil
	}
	orders := []struct {
		name string
		open func(ctx context.Context, open func() error) error
	}{
		{"the other node first", func(ctx context.Context, open func() error) error {
			if err := createMissing(ctx); err != nil {
				return err
			}
			return open()
		}},
		{"the opening node first", func(ctx context.Context, open func() error) error {
			if err := open(); err != nil {
				return err
			}
			return createMissing(ctx)
		}},
		{"both at once", func(ctx context.Context, open func() error) error {
			created := make(chan error, 1)
			go func() { created <- createMissing(ctx) }()
			openErr := open()
			return errors.Join(openErr, <-created)
		}},
	}
	for _, o := range orders {
		t.Run(o.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			for _, p := range missing {
				require.NoError(t, a.EventsStream().DeleteConsumer(ctx, bus.ConsumerName(p)))
			}
			require.NoError(t, o.open(ctx, func() error {
				_, err := bus.Open(ctx, envs[1].NC, envs[1].Bus.Cfg)
				return err
			}))
			for p := range a.Cfg.Partitions {
				c, err := a.EventsStream().Consumer(ctx, bus.ConsumerName(p))
				require.NoError(t, err, "partition %d has its consumer", p)
				require.Equal(t, bus.PartitionFilter(p), c.CachedInfo().Config.FilterSubject)
				require.Equal(t, 1, c.CachedInfo().Config.MaxAckPending, "one event in flight per partition")
			}
		})
	}
}
