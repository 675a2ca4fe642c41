package bench_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/e2e/e2etest"
	"github.com/agentproto/sentinel/runtime/metrics"
	"github.com/agentproto/sentinel/tools/bench"
)

// TestClusterPhaseSmall runs a tiny cluster phase on three `sentinel
// serve` processes of the built binary: a few pushes round-robin beside
// raw JetStream R3, one SIGKILL of the events stream's leader timed to the
// next accepted push, the restart; and checks the report carries the push
// phase's JSON names.
func TestClusterPhaseSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three sentinel serve processes")
	}
	bin, cleanup, err := e2etest.Build()
	require.NoError(t, err)
	t.Cleanup(cleanup)

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	start := time.Now()
	rep, err := bench.Run(ctx, bench.Options{
		Events: 12, Warmup: 3, Concurrency: 2, Fsync: []bool{false}, Binary: bin,
		Cluster: 3, Kills: 1, Boots: 1, ClusterSentinels: 9, CreateConcurrency: 2, Ticks: 1, Skip: map[string]bool{"push": true, "poll": true, "scale": true}, Dir: t.TempDir(),
		Progress: func(format string, args ...any) { t.Logf(format, args...) },
	})
	require.NoError(t, err)
	t.Logf("cluster phase took %s", time.Since(start).Round(time.Millisecond))
	require.Nil(t, rep.Scale)
	require.Empty(t, rep.Push)
	c := rep.Cluster
	require.NotNil(t, c)
	require.Equal(t, 3, c.Nodes)
	require.Equal(t, 3, c.Replicas)
	require.Equal(t, "default", c.Fsync)
	require.Equal(t, 12, c.Push.Latency.N, "every measured push landed in its inbox")
	require.Equal(t, 12, c.Raw.Latency.N)
	require.Equal(t, 12, c.Relay.Latency.N, "the HTTP relay is measured beside them")
	require.Positive(t, c.Push.EventsPerSec)
	require.Positive(t, c.Raw.EventsPerSec)
	require.Positive(t, c.Relay.EventsPerSec)
	require.Positive(t, c.Ratio)
	require.Positive(t, c.RelayRatio)
	require.Positive(t, c.StepsUs[metrics.StepPipeline], "the nodes' step times are read off their /metrics")
	require.Positive(t, c.StepsUs[metrics.StepRecordWrite])

	b := c.Boot
	require.NotNil(t, b, "boot-to-ready is measured")
	require.Equal(t, 1, b.Boots)
	require.Len(t, b.FirstMs, 1)
	require.Len(t, b.LaterMs, 1)
	require.Len(t, b.Load1, 1)
	require.Positive(t, b.FirstMs[0])
	require.Positive(t, b.LaterMs[0])
	require.Len(t, b.FirstWaitMs, 1)
	require.Positive(t, b.FirstWaitMs[0], "read off the nodes' logs")
	require.Less(t, b.FirstWaitMs[0], b.FirstMs[0])
	require.Positive(t, b.LaterWaitMs[0])
	require.Equal(t, bench.Spread{MinMs: b.FirstMs[0], MedianMs: b.FirstMs[0], MaxMs: b.FirstMs[0]}, b.First)

	f := c.Failover
	require.Equal(t, 1, f.Kills)
	require.Len(t, f.Samples, 1)
	s := f.Samples[0]
	require.Contains(t, []string{"bench-1", "bench-2", "bench-3"}, s.Killed)
	require.Contains(t, []string{"bench-1", "bench-2", "bench-3"}, s.AcceptedBy)
	require.NotEqual(t, s.Killed, s.AcceptedBy, "a surviving node accepted the push")
	require.Positive(t, s.Ms)
	require.Less(t, s.Ms, 60000.0)
	require.GreaterOrEqual(t, s.Probes, 1)
	require.NotEmpty(t, s.NewLeader, "the events stream has a leader again once the node is back")
	require.Positive(t, s.RestartToReadyMs)
	require.Equal(t, s.Ms, f.MedianMs)
	require.Equal(t, s.Ms, f.MaxMs)

	cs := c.Scale
	require.NotNil(t, cs, "the sentinels spread over the cluster are measured")
	require.Equal(t, 9, cs.Sentinels)
	require.Positive(t, cs.CreatesPerSec)
	require.Equal(t, 1, cs.QuietTick.Ticks)
	require.Positive(t, cs.RestartToReadyMs, "every node restarted and listed every sentinel")
	require.Len(t, cs.PerNode, 3)
	for _, n := range cs.PerNode {
		require.Positive(t, n.RSSAfterCreateMiB, n.Name)
		require.Positive(t, n.RSSAfterRestartMiB, n.Name)
	}

	var out bytes.Buffer
	require.NoError(t, rep.WriteTable(&out))
	require.Contains(t, out.String(), "Cluster scale: 9 sentinels over 3 nodes")
	require.Contains(t, out.String(), "raw JetStream R3")
	require.Contains(t, out.String(), "HTTP relay R3")
	require.Contains(t, out.String(), "Failover: SIGKILL")
	require.Contains(t, out.String(), "Boot to ready: 3 nodes")

	raw, err := json.Marshal(rep)
	require.NoError(t, err)
	var doc struct {
		Cluster map[string]json.RawMessage `json:"cluster"`
	}
	require.NoError(t, json.Unmarshal(raw, &doc))
	for _, name := range []string{"push", "rawJetStream", "throughputRatio", "addedP50Ms", "addedP99Ms", "httpRelay", "relayRatio", "relayAddedP50Ms", "relayAddedP99Ms", "fsync", "concurrency", "events", "failover"} {
		require.Contains(t, doc.Cluster, name, "the cluster phase uses the push phase's JSON names")
	}
	var lat struct {
		Latency map[string]float64 `json:"latency"`
	}
	var scale map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(doc.Cluster["scale"], &scale))
	for _, name := range []string{"createsPerSec", "restartToReadyMs", "rssAfterRestartMiB", "perNode", "quietTick"} {
		require.Contains(t, scale, name)
	}
	require.NoError(t, json.Unmarshal(doc.Cluster["push"], &lat))
	require.Contains(t, lat.Latency, "p50Ms")
	require.Contains(t, lat.Latency, "p99Ms")
}

// TestClusterPhaseNeedsABinary: the cluster phase refuses to run without
// a binary to start (it cannot SIGKILL an in-process node).
func TestClusterPhaseNeedsABinary(t *testing.T) {
	_, err := bench.Run(context.Background(), bench.Options{Cluster: 3, Skip: map[string]bool{"push": true, "poll": true, "scale": true}, Dir: t.TempDir()})
	require.ErrorContains(t, err, "needs Options.Binary")
}
