package bus_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/bus"
	"github.com/agentproto/sentinel/bus/bustest"
)

// A new cluster's meta leader refuses placements ("no suitable peers")
// until it has heard from every peer: provisioning retries that, and
// gives up at once on a real refusal.
func TestProvisionRetriesPeersNotYetKnown(t *testing.T) {
	ctx := context.Background()
	calls := 0
	err := bus.Provision(ctx, func(context.Context) error {
		if calls++; calls < 3 {
			return &jetstream.APIError{Code: 400, ErrorCode: 10005, Description: "no suitable peers for placement, peer offline"}
		}
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, 3, calls)

	calls = 0
	refusal := &jetstream.APIError{Code: 400, ErrorCode: 10052, Description: "invalid stream config"}
	err = bus.Provision(ctx, func(context.Context) error { calls++; return refusal })
	require.ErrorIs(t, err, refusal)
	require.Equal(t, 1, calls, "a refusal is not retried")
}

// A create whose answer never comes (nats-server answers one of several
// equal creates) ends as soon as the asset is found as wanted: the write
// is cancelled, not timed out, and the asset found is returned.
func TestProvisionAssetEndsTheWaitForALostAnswer(t *testing.T) {
	env := bustest.Start(t)
	js := env.JS
	want := jetstream.StreamConfig{Name: "LOST_ANSWER", Subjects: []string{"lost.answer.>"}, Storage: jetstream.FileStorage}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	writeEnded := make(chan error, 1)
	s, err := bus.ProvisionAsset(ctx, func(ctx context.Context) (jetstream.Stream, bool, error) {
		s, err := js.Stream(ctx, want.Name)
		return s, err == nil, err
	}, func(wctx context.Context) (jetstream.Stream, error) {
		// Another node's equal create lands; this one's answer is lost.
		if _, err := js.CreateStream(ctx, want); err != nil {
			return nil, err
		}
		<-wctx.Done()
		writeEnded <- wctx.Err()
		return nil, wctx.Err()
	})
	require.NoError(t, err)
	require.Equal(t, want.Name, s.CachedInfo().Config.Name)
	require.True(t, errors.Is(<-writeEnded, context.Canceled), "the wait ended by finding the stream, not by the attempt's timeout")
}

// An asset as wanted whose replicas are still electing (a restarted
// cluster) is waited for, never written: an update would be a replicated
// write for nothing.
func TestProvisionAssetWaitsForAnElectionWithoutWriting(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	looks, writes := 0, 0
	got, err := bus.ProvisionAssetStates(ctx, func(context.Context) (string, bus.AssetState, error) {
		if looks++; looks < 3 {
			return "", bus.AssetElecting, nil
		}
		return "led", bus.AssetReady, nil
	}, func(context.Context) (string, error) {
		writes++
		return "", errors.New("written")
	})
	require.NoError(t, err)
	require.Equal(t, "led", got)
	require.Equal(t, 3, looks)
	require.Zero(t, writes)
}
