package chaos

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// recovery: writes are back once every push sender had an event accepted
// after the fault; delivery once the first of those was seen in an inbox.
func TestRecoveryFromSendsAndSightings(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	sends := []Send{
		{ID: "a0", Sentinel: "a", Path: "push", Outcome: Accepted, Done: at(-10)},
		{ID: "a1", Sentinel: "a", Path: "push", Outcome: Accepted, Done: at(200)},
		{ID: "b1", Sentinel: "b", Path: "push", Outcome: Unknown, Done: at(300)},
		{ID: "b2", Sentinel: "b", Path: "push", Outcome: Accepted, Done: at(4000)},
		{ID: "p1", Sentinel: "p", Path: "poll", Outcome: Accepted, Done: at(100)},
	}
	seen := newSightings()
	seen.see("a0", at(0))
	seen.see("p1", at(1500))
	seen.see("a1", at(900))
	faults := []FaultResult{{Injected: t0, WritesMs: -1, DeliveryMs: -1}, {Injected: at(5000), WritesMs: -1, DeliveryMs: -1}}
	recovery(faults, sends, seen)
	require.Equal(t, 4000.0, faults[0].WritesMs, "b's first accepted send after the fault")
	require.Equal(t, 900.0, faults[0].DeliveryMs, "a1 seen first among sends accepted after the fault")
	require.Equal(t, -1.0, faults[1].WritesMs, "nothing accepted after the second fault")
	require.Equal(t, -1.0, faults[1].DeliveryMs)
}

func TestReportTableAndJSON(t *testing.T) {
	sends := history("x", Accepted, Accepted, Unknown)
	rep := &Report{Seed: 5, Target: "local", Nodes: []string{"n1", "n2", "n3"}, Started: time.Unix(0, 0).UTC(), DurationMs: 30000,
		Schedule: []Fault{{At: 3 * time.Second, Kind: Kill, Node: 1, Hold: 2 * time.Second, AtMs: 3000, HoldMs: 2000}},
		Paths:    pathCounts(sends, nil), Verdict: Check(sends, inbox("s1", "x-a"))}
	rep.Faults = []FaultResult{{Fault: rep.Schedule[0], NodeName: "n2", Injected: time.Unix(3, 0), WritesMs: 1500, DeliveryMs: -1, HealthyMs: 200}}
	var b strings.Builder
	require.NoError(t, rep.WriteTable(&b))
	out := b.String()
	for _, want := range []string{"seed 5", "kill   n2    t+3.0s  2.0s  1.5s", "lost                           1",
		"indeterminate, not delivered   1", "lost x-b:", "verdict: INVALID"} {
		require.Contains(t, out, want)
	}
	raw, err := json.Marshal(rep)
	require.NoError(t, err)
	var back Report
	require.NoError(t, json.Unmarshal(raw, &back))
	require.Equal(t, rep.Schedule, back.Schedule)
	require.Equal(t, rep.Faults[0].Fault, back.Faults[0].Fault)
	require.Equal(t, rep.Verdict, back.Verdict)
}
