// Package chaos_test runs the built `sentinel chaos` against the three
// local `sentinel serve` processes it starts itself: a short seeded run
// whose fault schedule is the one `--plan` prints for the seed, and whose
// oracle finds every event delivered exactly once, in order.
package chaos_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/e2e/e2etest"
	"github.com/agentproto/sentinel/tools/chaos"
)

var binary string

func TestMain(m *testing.M) {
	e2etest.Main(m, &binary)
}

// seed 196 over 40 s draws one fault of each local kind (pause, graceful
// restart, kill), printed by --plan.
const (
	seed     = "196"
	duration = "40s"
)

func run(t *testing.T, within time.Duration, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = e2etest.CleanEnv()
	cmd.Dir = t.TempDir()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	return out.String(), errb.String(), err
}

func TestChaosSeededLocalRun(t *testing.T) {
	plan, _, err := run(t, 30*time.Second, "chaos", "--plan", "--seed", seed, "--duration", duration)
	require.NoError(t, err)
	again, _, err := run(t, 30*time.Second, "chaos", "--plan", "--seed", seed, "--duration", duration)
	require.NoError(t, err)
	require.Equal(t, plan, again, "the same seed prints the same schedule")
	t.Logf("plan:\n%s", plan)

	start := time.Now()
	// A gentler rate than the default keeps the backlog a stall builds
	// up (and so the settle time) short on a loaded machine.
	stdout, stderr, err := run(t, 3*time.Minute, "chaos", "--seed", seed, "--duration", duration, "--settle", "45s",
		"--interval", "250ms", "--dir", t.TempDir(), "--json")
	t.Logf("sentinel chaos took %s; its progress:\n%s", time.Since(start).Round(time.Millisecond), stderr)
	t.Logf("report: %s", stdout)
	require.NoError(t, err, "sentinel chaos: %s", stdout)

	var rep chaos.Report
	require.NoError(t, json.Unmarshal([]byte(stdout), &rep), stdout)
	require.Equal(t, uint64(196), rep.Seed)
	require.Equal(t, "local", rep.Target)
	require.Len(t, rep.Nodes, 3)

	// The schedule it ran is the one --plan printed for the seed.
	var b bytes.Buffer
	require.NoError(t, chaos.WriteSchedule(&b, rep.Seed, rep.Schedule, nil))
	require.Equal(t, plan, b.String())
	kinds := map[chaos.Kind]bool{}
	require.Len(t, rep.Faults, len(rep.Schedule), "every planned fault was injected")
	for i, f := range rep.Faults {
		require.Empty(t, f.Error, "fault %d", i)
		require.Equal(t, rep.Schedule[i].Kind, f.Fault.Kind)
		require.Equal(t, rep.Schedule[i].Node, f.Fault.Node)
		kinds[f.Fault.Kind] = true
	}
	require.Equal(t, map[chaos.Kind]bool{chaos.Kill: true, chaos.Pause: true, chaos.Restart: true}, kinds)

	v := rep.Verdict
	require.True(t, v.Valid, "findings: %+v", v.Findings)
	require.Zero(t, v.Counts.Lost)
	require.Zero(t, v.Counts.Duplicated)
	require.Zero(t, v.Counts.Unexpected)
	require.Zero(t, v.Counts.Reordered)
	require.Equal(t, v.Counts.Sent, v.Counts.OK+v.Counts.IndeterminatePresent+v.Counts.IndeterminateAbsent+v.Counts.RefusedAbsent)
	paths := map[string]chaos.PathCount{}
	for _, p := range rep.Paths {
		paths[p.Path] = p
	}
	require.Positive(t, paths["push"].Accepted, "pushes were accepted")
	require.Positive(t, paths["poll"].Accepted, "feed events were written")
	require.Equal(t, rep.PushSentinels, 6)
	require.Equal(t, rep.PollSentinels, 3)
}

func TestChaosBadFlagsExitTwo(t *testing.T) {
	for _, args := range [][]string{
		{"chaos", "--faults", "reboot"},
		{"chaos", "--duration", "1s"},
		{"chaos", "--push-sentinels", "0"},
	} {
		_, stderr, err := run(t, 30*time.Second, args...)
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "%v", args)
		require.Equal(t, 2, ee.ExitCode(), "%v: %s", args, stderr)
	}
}
