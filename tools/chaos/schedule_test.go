package chaos

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func planOpts() PlanOptions {
	return PlanOptions{Duration: 2 * time.Minute, Nodes: 3, Kinds: ComposeKinds, AckWait: 4 * time.Second,
		Warmup: 3 * time.Second, Tail: 3 * time.Second, Gap: 3 * time.Second, RecoveryAllowance: 4 * time.Second}
}

func TestPlanIsDeterministicPerSeed(t *testing.T) {
	a, b := Plan(42, planOpts()), Plan(42, planOpts())
	require.NotEmpty(t, a)
	require.Equal(t, a, b, "the same seed and options give the same schedule")
	require.NotEqual(t, a, Plan(43, planOpts()), "another seed gives another schedule")
}

func TestPlanKeepsItsBounds(t *testing.T) {
	o := planOpts()
	for seed := range uint64(200) {
		plan := Plan(seed, o)
		require.NotEmpty(t, plan, "seed %d", seed)
		var end time.Duration
		for _, f := range plan {
			require.GreaterOrEqual(t, f.At, max(end, o.Warmup), "seed %d: faults are sequential, after the warm-up", seed)
			require.Contains(t, o.Kinds, f.Kind)
			require.True(t, f.Node >= 0 && f.Node < o.Nodes, "seed %d: node %d", seed, f.Node)
			switch f.Kind {
			case Pause:
				require.Greater(t, f.Hold, o.AckWait, "seed %d: a pause outlasts bus.ack_wait", seed)
			case Restart:
				require.Zero(t, f.Hold)
			default:
				require.Positive(t, f.Hold)
			}
			end = f.At + f.Hold + o.RecoveryAllowance/4
			if f.Kind == Kill || f.Kind == Restart {
				end = f.At + f.Hold + o.RecoveryAllowance
			}
			require.LessOrEqual(t, end, o.Duration-o.Tail, "seed %d: every fault heals before the tail", seed)
			require.Equal(t, f.At.Milliseconds(), f.AtMs)
			require.Equal(t, f.Hold.Milliseconds(), f.HoldMs)
		}
	}
}

func TestPlanDrawsOnlyTheGivenKinds(t *testing.T) {
	o := planOpts()
	o.Kinds = []Kind{Kill}
	for _, f := range Plan(7, o) {
		require.Equal(t, Kill, f.Kind)
	}
	o.Nodes = 0
	require.Empty(t, Plan(7, o))
}

func TestParseKind(t *testing.T) {
	for _, s := range []string{"kill", "PAUSE", " restart ", "partition"} {
		_, err := ParseKind(s)
		require.NoError(t, err, s)
	}
	_, err := ParseKind("reboot")
	require.ErrorContains(t, err, `unknown fault kind "reboot"`)
}

func TestValidateNamesTheBadOption(t *testing.T) {
	o := DefaultOptions()
	require.NoError(t, o.Validate())
	bad := o
	bad.Duration = time.Second
	require.ErrorContains(t, bad.Validate(), "duration")
	bad = o
	bad.PushSentinels = 0
	require.ErrorContains(t, bad.Validate(), "push sentinels")
	bad = o
	bad.RequestTimeout = time.Minute
	require.ErrorContains(t, bad.Validate(), "timeouts")
	bad = o
	bad.AckWait = time.Millisecond
	require.ErrorContains(t, bad.Validate(), "ack wait")
}

func TestFaultJSONRoundTrip(t *testing.T) {
	plan := Plan(9, planOpts())
	raw, err := json.Marshal(plan)
	require.NoError(t, err)
	var back []Fault
	require.NoError(t, json.Unmarshal(raw, &back))
	require.Equal(t, plan, back)
}
