package chaos_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/tools/chaos"
)

// Issue 21: a bounded randomized run of `sentinel chaos` with pause faults
// only (SIGSTOP past bus.ack_wait, then SIGCONT) on three local nodes, for
// fixed seeds: the interleavings a pause makes (a stale handler, a stale
// ack, a stale poll owner, a trim racing a publish) under a real workload,
// with the oracle's verdict asserted. Each seed draws two pauses over 30 s
// (--plan prints them); about a minute a seed on the loaded machine. The
// seeds run at the same time, each on its own three nodes (ports and
// cluster name of their own): the run is mostly waiting out its duration
// and settle time, so two of them take about the wall of one.
func TestChaosPausesOnThreeLocalNodes(t *testing.T) {
	for _, seed := range []string{"2", "7"} {
		t.Run("seed "+seed, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			stdout, stderr, err := run(t, 3*time.Minute, "chaos", "--seed", seed, "--duration", "30s", "--faults", "pause",
				"--settle", "45s", "--interval", "250ms", "--dir", t.TempDir(), "--json")
			t.Logf("sentinel chaos took %s; its progress:\n%s", time.Since(start).Round(time.Millisecond), stderr)
			require.NoError(t, err, "sentinel chaos: %s", stdout)
			var rep chaos.Report
			require.NoError(t, json.Unmarshal([]byte(stdout), &rep), stdout)
			require.Len(t, rep.Faults, 2, "two pauses drawn")
			for i, f := range rep.Faults {
				require.Equal(t, chaos.Pause, f.Fault.Kind, "fault %d", i)
				require.Empty(t, f.Error, "fault %d", i)
			}
			v := rep.Verdict
			require.True(t, v.Valid, "findings: %+v", v.Findings)
			require.Zero(t, v.Counts.Lost)
			require.Zero(t, v.Counts.Duplicated)
			require.Zero(t, v.Counts.Unexpected)
			require.Zero(t, v.Counts.Reordered)
			require.Positive(t, v.Counts.OK)
		})
	}
}
