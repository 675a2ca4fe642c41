package deliver_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/runtime/deliver"
	"github.com/agentproto/sentinel/runtime/metrics"
	"github.com/agentproto/sentinel/runtime/runtimetest"
)

// The workers count the deliveries that had another event of their
// partition waiting behind them (the backlog a partition batch would
// take): three events stored before the workers start are delivered one
// at a time, the first two each with events behind them.
func TestWorkersCountTheBacklogBehindEachDelivery(t *testing.T) {
	m := metrics.New()
	e := runtimetest.Start(t, runtimetest.Options{Partitions: 1, NoWorkers: true, PipelineOpts: []deliver.PipelineOption{deliver.WithMetrics(m)}})
	rec := watchPR(e, "s1", nil, pr)
	_, err := e.Publisher.Publish(context.Background(), rec.ID, []sentinel.Event{
		runtimetest.Event("evt_1", "x.y.z", pr, false),
		runtimetest.Event("evt_2", "x.y.z", pr, false),
		runtimetest.Event("evt_3", "x.y.z", pr, false),
	}, "test")
	require.NoError(t, err)
	e.StartWorkers()
	e.WaitInbox("s1", 3)
	e.Drained()
	require.Equal(t, metrics.DeliveryBacklog{Received: 3, Backlogged: 2}, m.DeliveryBacklog())
}
