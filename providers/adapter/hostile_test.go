package adapter_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/bus/bustest"
	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/adapter"
	"github.com/agentproto/sentinel/providers/adapter/adaptertest"
)

// TestHostileHandshakes: an adapter that does not start, answers garbage,
// floods, hangs in describe or describes itself wrongly is unavailable with
// a reason naming what happened; the listing's calls return (the handshake
// is bounded) and nothing else is declared.
func TestHostileHandshakes(t *testing.T) {
	short := testConfig()
	short.HandshakeTimeout = 500 * time.Millisecond
	cases := []struct {
		name, mode string
		cfg        *adapter.Config
		want       string
	}{
		{"does not start", adaptertest.ModeNoStart, nil, "exit status 3"},
		{"answers garbage", adaptertest.ModeGarbage, nil, "unreadable output"},
		{"floods", adaptertest.ModeFlood, nil, "flooded its output"},
		{"hangs in describe", adaptertest.ModeHangDescribe, &short, "no answer to describe within 500ms"},
		{"names another slug", adaptertest.ModeWrongSlug, nil, `describe names the slug "someone-else"`},
		{"speaks another protocol", adaptertest.ModeOldProtocol, nil, "protocol version 0, the node speaks 1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFeed(t, "feed", tc.mode, tc.cfg, "")
			ctx := context.Background()
			reason := f.P.Unavailable(ctx)
			require.Contains(t, reason, "adapter handshake failed")
			require.Contains(t, reason, tc.want)
			require.Equal(t, providers.Capabilities{}, f.P.Capabilities(), "an undescribed adapter declares nothing")
			r := f.P.Readiness(ctx)
			require.False(t, r.Ready)
			require.Contains(t, r.Reason, "the adapter is unavailable")
			require.Equal(t, "feed", f.P.Info().Slug)
			// Within the backoff, no second start.
			require.NotEmpty(t, f.P.Unavailable(ctx))
			require.Equal(t, 1, f.P.Process().State().Starts)
			require.Contains(t, f.P.LastError(), tc.want)
		})
	}
}

// TestHostilePolls: an adapter that hangs, crashes, answers an oversized
// line or floods stderr during a poll costs the caller one bounded call: a
// named error, the process killed, later calls refused at once until the
// backoff passes, then a fresh process.
func TestHostilePolls(t *testing.T) {
	hang := testConfig()
	hang.CallTimeout = 500 * time.Millisecond
	cases := []struct {
		name, mode string
		cfg        *adapter.Config
		is         error
		want       string
	}{
		{"hangs", adaptertest.ModeHangPoll, &hang, adapter.ErrTimeout, "poll got no answer within 500ms"},
		{"crashes", adaptertest.ModeCrashPoll, nil, adapter.ErrUnavailable, "exit status 7"},
		{"answers a line over the cap", adaptertest.ModeHuge, nil, adapter.ErrProtocol, "message larger than the line cap"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFeed(t, "feed", tc.mode, tc.cfg, "")
			ctx := context.Background()
			h, err := f.P.Create(ctx, providers.CreateRequest{SentinelID: "sen_1", Spec: feedSpec("feed:a"), Delivery: providers.Delivery{Mode: providers.ModePoll}})
			require.NoError(t, err)
			_, err = f.P.Poll(ctx, h, 10)
			require.ErrorIs(t, err, tc.is)
			require.Contains(t, err.Error(), tc.want)
			require.True(t, providers.ReasonOf(err) != providers.ReasonUnknown, "a classified provider error")
			bustest.Eventually(t, 10*time.Second, func() bool { return !f.P.Process().State().Running }, "the process to be retired")

			// Within the backoff every call is refused at once.
			_, err = f.P.Poll(ctx, h, 10)
			require.ErrorIs(t, err, adapter.ErrUnavailable)
			require.Contains(t, err.Error(), "next start in")
			require.Equal(t, 1, f.P.Process().State().Starts)

			// Past it, the next call starts a fresh process.
			f.Clock.Advance(2 * time.Second)
			_, err = f.P.Poll(ctx, h, 10)
			require.ErrorIs(t, err, tc.is)
			require.Equal(t, 2, f.P.Process().State().Starts)
		})
	}
}

// TestStderrFloodIsBounded: an adapter that floods stderr still answers;
// the node logs a bounded number of its lines and counts the rest.
func TestStderrFloodIsBounded(t *testing.T) {
	f := newFeed(t, "feed", adaptertest.ModeStderrFlood, nil, "")
	ctx := context.Background()
	h, err := f.P.Create(ctx, providers.CreateRequest{SentinelID: "sen_1", Spec: feedSpec("feed:a"), Delivery: providers.Delivery{Mode: providers.ModePoll}})
	require.NoError(t, err)
	_, err = f.P.Poll(ctx, h, 10)
	require.NoError(t, err)
	bustest.Eventually(t, 20*time.Second, func() bool { return strings.Contains(f.Log.String(), "adapter stderr lines dropped") },
		"the dropped stderr lines to be reported")
}
