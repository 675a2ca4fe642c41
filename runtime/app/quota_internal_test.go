package app

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/bus/bustest"
	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/runtime/quota"
)

// countingRunner stands in for gh: it counts the calls that reach it.
type countingRunner struct{ calls int }

func (r *countingRunner) API(context.Context, string, string, []byte) (int, http.Header, []byte, error) {
	r.calls++
	return http.StatusOK, http.Header{}, []byte(`[]`), nil
}

// TestGHCallsWaitOutTheTokensPause: with gh's token, the webhook
// provider's hook management and reconciliation run gh, not the
// in-process client; a secondary limit the governor recorded for the node's
// token (any node's answer) holds them too, until the pause ends.
func TestGHCallsWaitOutTheTokensPause(t *testing.T) {
	be := bustest.Start(t)
	now := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	g, err := quota.Open(context.Background(), be.Bus, quota.Config{Node: "n1", Now: clock})
	require.NoError(t, err)
	t.Cleanup(g.Stop)
	var sink quotaSink
	gh := &countingRunner{}
	r := heldRunner{Runner: gh, hold: sink.hold, now: clock}
	ctx := context.Background()

	_, _, _, err = r.API(ctx, http.MethodGet, "repos/acme/widgets/hooks", nil)
	require.NoError(t, err, "no governor yet: nothing is paused")
	sink.g.Store(g)
	g.Observe(quota.Sample{Credential: "token", Known: true, Limit: 5000, Remaining: 4000, Reset: now.Add(time.Hour), Secondary: true, RetryAfter: time.Minute})

	_, _, _, err = r.API(ctx, http.MethodPost, "repos/acme/widgets/hooks", []byte(`{}`))
	var pe *providers.Error
	require.ErrorAs(t, err, &pe)
	require.Equal(t, providers.ReasonRateLimited, pe.Reason)
	require.Equal(t, time.Minute, pe.RetryAfter)
	require.Equal(t, 1, gh.calls, "gh is not run while the token is paused")

	now = now.Add(time.Minute)
	_, _, _, err = r.API(ctx, http.MethodGet, "repos/acme/widgets/hooks", nil)
	require.NoError(t, err)
	require.Equal(t, 2, gh.calls)
}
