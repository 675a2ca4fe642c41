package bench_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/runtime/metrics"
	"github.com/agentproto/sentinel/tools/bench"
)

// TestRunSmall runs every phase at toy sizes in-process (no Go benchmark)
// and checks the report is complete and renders.
func TestRunSmall(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := bench.Run(ctx, bench.Options{
		Events: 30, Warmup: 5, Concurrency: 2, Fsync: []bool{false},
		Sentinels: 60, CreateConcurrency: 3, ListRequests: 3, Ticks: 2, Dir: t.TempDir(),
	})
	require.NoError(t, err)
	require.Len(t, rep.Push, 1)
	p := rep.Push[0]
	require.Equal(t, "default", p.Fsync)
	require.Equal(t, 30, p.Push.Latency.N)
	require.Equal(t, 30, p.Raw.Latency.N)
	require.Positive(t, p.Push.EventsPerSec)
	require.Positive(t, p.Raw.EventsPerSec)
	require.Positive(t, p.Ratio)
	require.Equal(t, 30, p.Relay.Latency.N)
	require.Positive(t, p.Relay.EventsPerSec)
	require.Positive(t, p.RelayRatio)
	require.LessOrEqual(t, p.Push.Latency.P50Ms, p.Push.Latency.P99Ms)
	for _, step := range []string{metrics.StepIngressHandle, metrics.StepPublish, metrics.StepQueued, metrics.StepInbox, metrics.StepRecordWrite, metrics.StepPipeline} {
		require.Positive(t, p.StepsUs[step], "the node's mean %s time", step)
	}

	require.NotNil(t, rep.Scale)
	s := rep.Scale
	require.Equal(t, "in-process", s.Mode)
	require.Equal(t, 60, s.Sentinels)
	require.Equal(t, 3, s.List.N)
	require.Equal(t, 3, s.ListPage.N)
	require.Positive(t, s.ListBytes)
	require.Positive(t, s.RestartToReadyMs)
	require.Positive(t, s.RSSAfterCreateMiB)
	require.Equal(t, 2, s.QuietTick.Ticks)

	require.NotNil(t, rep.Poll)
	require.NotNil(t, rep.Poll.Node)
	require.NotEmpty(t, rep.Poll.LocalGH.Skipped, "the Go benchmark was not asked for")

	var out bytes.Buffer
	require.NoError(t, rep.WriteTable(&out))
	require.Contains(t, out.String(), "raw JetStream")
	require.Contains(t, out.String(), "push/relay")
	require.Contains(t, out.String(), "restart to ready")
	require.Contains(t, out.String(), "GET /sentinels?limit=100")
	raw, err := json.Marshal(rep)
	require.NoError(t, err)
	var back struct {
		Push  []map[string]any `json:"push"`
		Scale map[string]any   `json:"scale"`
	}
	require.NoError(t, json.Unmarshal(raw, &back))
	require.Positive(t, back.Scale["createsPerSec"], "the scale phase's create rate")
	require.Equal(t, back.Scale["createsPerSec"], back.Scale["createPerSec"], "and under its earlier name")
	require.Contains(t, back.Scale, "restartToReadyMs")
	require.Contains(t, back.Scale, "rssAfterRestartMiB")
	require.Contains(t, back.Push[0], "httpRelay")
	require.Contains(t, back.Push[0], "relayRatio")
	require.Contains(t, back.Push[0], "rawJetStream")
	require.Contains(t, back.Push[0], "throughputRatio")
}

// TestFakeHookKey pins the fake provider's hook key scheme the push path
// relies on.
func TestFakeHookKey(t *testing.T) {
	require.Equal(t, "fk-sen_01abc", bench.FakeHookKey("sen_01ABC"))
}
