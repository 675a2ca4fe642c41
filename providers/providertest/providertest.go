// Package providertest is the conformance suite every poll-capable
// provider passes: metadata, create, envelope validity, deterministic ids
// on a re-poll of the same window, a cursor that only moves forward,
// idempotent cancel, status, and a prompt return on a cancelled context.
// Each provider's tests call RunPoller with a harness over its own fake
// upstream.
package providertest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
)

// Harness adapts one provider to the suite.
type Harness struct {
	// Provider is the provider under test.
	Provider providers.Provider
	// Subject is a clause subject the provider accepts.
	Subject string
	// Until is the stop condition used at create (default never).
	Until sentinel.Until
	// Emit makes the upstream produce n new events for Subject.
	Emit func(t *testing.T, n int)
}

// RunPoller runs the suite.
func RunPoller(t *testing.T, h Harness) {
	t.Helper()
	p := h.Provider
	if h.Until.Kind == "" {
		h.Until = sentinel.Until{Kind: sentinel.UntilNever}
	}
	ctx := context.Background()
	poller, ok := p.(providers.Poller)
	require.True(t, ok, "a poll-capable provider implements providers.Poller")

	t.Run("metadata", func(t *testing.T) {
		inf := p.Info()
		require.NotEmpty(t, inf.Slug)
		require.NotEmpty(t, inf.Name)
		require.True(t, p.Capabilities().Poll)
		require.NotEmpty(t, p.Capabilities().Subjects)
		require.NotNil(t, p.DefaultTypes(h.Subject))
	})

	id := sentinel.NewSentinelID()
	handle, err := p.Create(ctx, providers.CreateRequest{
		SentinelID: id,
		Spec:       sentinel.Spec{Match: []sentinel.Clause{{Subject: h.Subject}}, Until: h.Until, Target: sentinel.Target{Kind: sentinel.TargetSession, SessionID: "s1"}},
		Delivery:   providers.Delivery{Mode: providers.ModePoll, IntervalMs: 15000},
	})
	require.NoError(t, err, "create")
	require.Contains(t, []string{"", p.Info().Slug}, handle.Provider)

	// Drain whatever the provider reports first (a baseline).
	for i := 0; i < 5; i++ {
		res, err := poller.Poll(ctx, handle, 50)
		require.NoError(t, err)
		handle.Cursor = res.Cursor
		if len(res.Events) == 0 {
			break
		}
	}
	base := handle

	h.Emit(t, 3)
	first, err := poller.Poll(ctx, base, 50)
	require.NoError(t, err)
	require.NotEmpty(t, first.Events, "the emitted events are polled")
	seen := map[string]bool{}
	for _, ev := range first.Events {
		require.NoError(t, ev.Validate(), "every envelope is valid")
		require.NotEmpty(t, ev.AllSubjects())
		require.False(t, seen[ev.ID], "ids are unique within a batch: %s", ev.ID)
		seen[ev.ID] = true
	}

	t.Run("re-poll of the same window yields the same ids", func(t *testing.T) {
		again, err := poller.Poll(ctx, base, 50)
		require.NoError(t, err)
		require.Equal(t, ids(first.Events), ids(again.Events))
	})

	t.Run("the cursor moves forward", func(t *testing.T) {
		next := base
		next.Cursor = first.Cursor
		res, err := poller.Poll(ctx, next, 50)
		require.NoError(t, err)
		for _, ev := range res.Events {
			require.False(t, seen[ev.ID], "an event polled before the cursor comes back: %s", ev.ID)
		}
		require.NoError(t, poller.Ack(ctx, base, first.Cursor))
	})

	t.Run("a cancelled context returns promptly", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, _ = poller.Poll(cctx, base, 50)
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("Poll ignored a cancelled context")
		}
	})

	t.Run("status and idempotent cancel", func(t *testing.T) {
		_, err := p.Status(ctx, handle)
		require.NoError(t, err)
		require.NoError(t, p.Cancel(ctx, handle))
		require.NoError(t, p.Cancel(ctx, handle), "cancel is idempotent")
	})
}

func ids(evs []sentinel.Event) []string {
	out := make([]string, 0, len(evs))
	for _, e := range evs {
		out = append(out, e.ID)
	}
	return out
}
