package bench

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestBaselinesNeverStall sends thousands of events one at a time through
// the raw JetStream chain and the HTTP relay and requires each to land
// within 10 s. A long-lived Consume(PullMaxMessages(1)) loses its
// follow-up pull request when a reply is handled before its pull goroutine
// clears the in-progress mark (see pullers) and stalls until its missed
// heartbeat timer fires 30 s later; on this shared machine that happened
// within the first few thousand events. The 10 s bound is a liveness
// check, far above any normal latency, not a speed measure.
func TestBaselinesNeverStall(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 80*time.Second)
	defer cancel()
	n, err := startInProcess(ctx, t.TempDir(), false, 0)
	require.NoError(t, err)
	defer func() { _ = n.stop(context.Background()) }()
	// One sender: the stall is per consumer. The race detector slows every
	// event about tenfold, so a -race run sends fewer.
	const senders = 1
	rawEvents, relayEvents := 8000, 2000
	if raceOn {
		rawEvents, relayEvents = 1500, 300
	}
	js, err := n.js()
	require.NoError(t, err)
	raw, err := newRawPath(ctx, js, n.app.NATSConn(), senders, 1)
	require.NoError(t, err)
	defer raw.close()
	relay, err := newRelayPath(ctx, n, senders)
	require.NoError(t, err)
	defer relay.close()
	for _, p := range []struct {
		name   string
		events int
		send   func(ctx context.Context, w int, id string) error
	}{{"raw JetStream", rawEvents, raw.send}, {"HTTP relay", relayEvents, relay.send}} {
		bounded := func(ctx context.Context, w int, id string) error {
			ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			return p.send(ctx, w, id)
		}
		lats, _, err := sample(ctx, p.events, senders, "stall", bounded)
		require.NoError(t, err, p.name)
		require.Len(t, lats, p.events, p.name)
	}
}
