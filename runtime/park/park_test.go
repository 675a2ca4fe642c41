package park_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus/bustest"
	"github.com/agentproto/sentinel/runtime/park"
)

func bigEvent(dataBytes, summaryBytes int) *sentinel.Event {
	ev := sentinel.NewEvent("evt_big", "//test", "a.b.c", "github:acme/widgets#7", []string{"github:acme/widgets#7"},
		time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), strings.Repeat("s", summaryBytes), false,
		map[string]string{"blob": strings.Repeat("d", dataBytes)})
	return &ev
}

// TestParkTrimsARecordOverTheMaxPayload: a record larger than the bus
// accepts is trimmed and parked, never refused (a park that fails leaves
// the event to be retried forever).
func TestParkTrimsARecordOverTheMaxPayload(t *testing.T) {
	env := bustest.Start(t)
	j, err := park.Open(context.Background(), env.Bus, env.Bus.Cfg)
	require.NoError(t, err)
	ctx := context.Background()
	max := int(env.NC.MaxPayload())
	require.NoError(t, j.Park(ctx, "sen_a", sentinel.Parked{SentinelID: "sen_a", Event: bigEvent(max, 100), Reason: "too big"}, ""))
	require.NoError(t, j.Park(ctx, "sen_a", sentinel.Parked{SentinelID: "sen_a", Item: strings.Repeat("i", 2*max), Reason: "undecodable event"}, ""))
	recs, err := j.List(ctx, "sen_a", 10)
	require.NoError(t, err)
	require.Len(t, recs, 2)
	require.Equal(t, "evt_big", recs[0].Event.ID)
	require.JSONEq(t, `{"truncated":true}`, string(recs[0].Event.Data))
	require.Equal(t, "too big"+park.TrimmedNote, recs[0].Reason)
	require.Less(t, len(recs[1].Item.(string)), max)
	require.Equal(t, "undecodable event"+park.TrimmedNote, recs[1].Reason)
}

// TestParkRunsOnAFreshContext: parking settles an event whose time ran
// out, so an expired caller context does not stop it.
func TestParkRunsOnAFreshContext(t *testing.T) {
	env := bustest.Start(t)
	j, err := park.Open(context.Background(), env.Bus, env.Bus.Cfg)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.NoError(t, j.Park(ctx, "sen_a", sentinel.Parked{SentinelID: "sen_a", Reason: "late"}, ""))
	recs, err := j.List(context.Background(), "sen_a", 10)
	require.NoError(t, err)
	require.Len(t, recs, 1)
}

func TestFit(t *testing.T) {
	cases := []struct {
		name    string
		rec     sentinel.Parked
		max     int
		trimmed bool
		check   func(t *testing.T, r sentinel.Parked)
	}{
		{name: "small record unchanged", rec: sentinel.Parked{Event: bigEvent(10, 10), Reason: "r"}, max: 4096,
			check: func(t *testing.T, r sentinel.Parked) { require.Contains(t, string(r.Event.Data), "blob") }},
		{name: "data dropped first", rec: sentinel.Parked{Event: bigEvent(8000, 10), Reason: "r"}, max: 4096, trimmed: true,
			check: func(t *testing.T, r sentinel.Parked) {
				require.JSONEq(t, `{"truncated":true}`, string(r.Event.Data))
				require.Len(t, r.Event.Summary, 10, "the summary stays when it fits")
			}},
		{name: "identity stub last", rec: sentinel.Parked{Event: bigEvent(10, 3000), Reason: strings.Repeat("r", 9000)}, max: 6000, trimmed: true,
			check: func(t *testing.T, r sentinel.Parked) {
				require.Equal(t, "evt_big", r.Event.ID)
				require.Empty(t, r.Event.Summary)
				require.LessOrEqual(t, len(r.Reason), 4096+len(park.TrimmedNote))
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			raw, err := park.Fit(tc.rec, tc.max)
			require.NoError(t, err)
			require.LessOrEqual(t, len(raw), tc.max)
			var r sentinel.Parked
			require.NoError(t, json.Unmarshal(raw, &r))
			require.Equal(t, tc.trimmed, strings.HasSuffix(r.Reason, park.TrimmedNote))
			tc.check(t, r)
		})
	}
}
