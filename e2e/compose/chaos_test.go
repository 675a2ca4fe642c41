package compose

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/tools/chaos"
)

// chaosSeed over chaosDuration draws a kill, a pause longer than
// bus.ack_wait (10 s) and a partition (docker network disconnect /
// connect): `sentinel chaos --plan --compose x --seed 157 --duration 45s`.
const (
	chaosSeed     = "157"
	chaosDuration = "45s"
)

// A bounded `sentinel chaos --compose` run against the shipped
// docker-compose.yml (the fake provider enabled by the test's override):
// every planned fault is injected and healed, and the oracle finds every
// accepted event in its inbox exactly once, in order.
func TestComposeChaos(t *testing.T) {
	needDocker(t)
	p := newProject(t, "docker-compose.yml",
		map[string]string{"node1": "SENTINEL_PORT_1", "node2": "SENTINEL_PORT_2", "node3": "SENTINEL_PORT_3"}, nodes...)
	stage(t, "up", p.up)
	stage(t, "wait for three healthy nodes", func() { p.waitHealthy(3*time.Minute, nodes...) })

	var stdout, stderr strings.Builder
	var runErr error
	stage(t, "sentinel chaos --compose", func() {
		ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, env.bin, "chaos", "--compose", p.name, "--seed", chaosSeed, "--duration", chaosDuration,
			"--settle", "60s", "--json")
		// The token comes from the environment, as compose's own
		// variable: never argv.
		cmd.Env = append(cleanEnv(), "SENTINEL_TOKEN="+p.token)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		runErr = cmd.Run()
	})
	t.Logf("progress:\n%s", stderr.String())
	require.NoError(t, runErr, "sentinel chaos --compose: %s", stdout.String())

	var rep chaos.Report
	require.NoError(t, json.Unmarshal([]byte(stdout.String()), &rep), stdout.String())
	require.Equal(t, "compose "+p.name, rep.Target)
	require.Len(t, rep.Faults, len(rep.Schedule), "every planned fault was injected")
	kinds := map[chaos.Kind]bool{}
	for i, f := range rep.Faults {
		require.Empty(t, f.Error, "fault %d", i)
		kinds[f.Fault.Kind] = true
		if f.Fault.Kind == chaos.Partition {
			require.Positive(t, f.CutNoticedMs, "the cut-off node's own probe (docker exec ... /sentinel health) said so")
		}
		t.Logf("fault %s of %s: writes back %.0f ms, delivers %.0f ms, healthy %.0f ms after the heal",
			f.Fault.Kind, f.NodeName, f.WritesMs, f.DeliveryMs, f.HealthyMs)
	}
	require.True(t, kinds[chaos.Partition], "the schedule of seed %s holds a partition", chaosSeed)
	v := rep.Verdict
	t.Logf("verdict: %+v", v.Counts)
	require.True(t, v.Valid, "findings: %+v", v.Findings)
	require.Positive(t, v.Counts.OK)
}

// cleanEnv is this process's environment without AGENTPROTO_* or
// SENTINEL_* settings.
func cleanEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AGENTPROTO_") && !strings.HasPrefix(kv, "SENTINEL_") {
			out = append(out, kv)
		}
	}
	return out
}
