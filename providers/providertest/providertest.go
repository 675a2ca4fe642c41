// Package providertest is the conformance suite every poll-capable
// provider passes: metadata, create, envelope validity, deterministic ids
// on a re-poll of the same window, a cursor that only moves forward,
// idempotent cancel, status, and a prompt return on a cancelled context.
// Each provider's tests call RunPoller with a harness over its own fake
// upstream; `sentinel adapter test` runs the same checks against an adapter
// executable outside `go test` (Check) and prints what holds.
package providertest

import (
	"context"
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
	// Emit makes the upstream produce n new events for Subject. Nil skips
	// the checks that need new events (an executable tested against a
	// real upstream that is quiet).
	Emit func(t T, n int)
}

// T is what a check reports through: *testing.T, or the runner of Check.
type T interface {
	require.TestingT
	Helper()
	Skipf(format string, args ...any)
}

// check is one named step of the suite.
type check struct {
	name string
	run  func(t T, s *state)
}

// state is what the steps share: the handle, the baseline, the first
// batch of emitted events.
type state struct {
	h       Harness
	poller  providers.Poller
	handle  sentinel.Handle
	base    sentinel.Handle
	first   providers.PollResult
	seen    map[string]bool
	created bool
	emitted bool
}

// checks is the suite, in order.
func checks() []check {
	return []check{
		{"metadata", func(t T, s *state) {
			p := s.h.Provider
			inf := p.Info()
			require.NotEmpty(t, inf.Slug)
			require.NotEmpty(t, inf.Name)
			require.True(t, p.Capabilities().Poll, "capabilities.poll")
			require.NotEmpty(t, p.Capabilities().Subjects)
			require.NotNil(t, p.DefaultTypes(s.h.Subject))
			poller, ok := p.(providers.Poller)
			require.True(t, ok, "a poll-capable provider implements providers.Poller")
			s.poller = poller
		}},
		{"create", func(t T, s *state) {
			need(t, s.poller != nil, "metadata")
			p := s.h.Provider
			handle, err := p.Create(context.Background(), providers.CreateRequest{
				SentinelID: sentinel.NewSentinelID(),
				Spec:       sentinel.Spec{Match: []sentinel.Clause{{Subject: s.h.Subject}}, Until: s.h.Until, Target: sentinel.Target{Kind: sentinel.TargetSession, SessionID: "s1"}},
				Delivery:   providers.Delivery{Mode: providers.ModePoll, IntervalMs: 15000},
			})
			require.NoError(t, err, "create")
			require.Contains(t, []string{"", p.Info().Slug}, handle.Provider)
			s.handle, s.created = handle, true
		}},
		{"the first polls establish a baseline", func(t T, s *state) {
			need(t, s.created, "create")
			for i := 0; i < 5; i++ {
				res, err := s.poller.Poll(context.Background(), s.handle, 50)
				require.NoError(t, err)
				for _, ev := range res.Events {
					require.NoError(t, ev.Validate(), "every envelope is valid")
				}
				s.handle.Cursor = res.Cursor
				if len(res.Events) == 0 {
					break
				}
			}
			s.base = s.handle
		}},
		{"new events are polled, valid and unique", func(t T, s *state) {
			need(t, s.created, "create")
			if s.h.Emit == nil {
				t.Skipf("no way to make the upstream produce events here (the Go harness's Emit)")
			}
			s.h.Emit(t, 3)
			first, err := s.poller.Poll(context.Background(), s.base, 50)
			require.NoError(t, err)
			require.NotEmpty(t, first.Events, "the emitted events are polled")
			s.seen = map[string]bool{}
			for _, ev := range first.Events {
				require.NoError(t, ev.Validate(), "every envelope is valid")
				require.NotEmpty(t, ev.AllSubjects())
				require.False(t, s.seen[ev.ID], "ids are unique within a batch: %s", ev.ID)
				s.seen[ev.ID] = true
			}
			s.first, s.emitted = first, true
		}},
		{"re-poll of the same window yields the same ids", func(t T, s *state) {
			need(t, s.emitted, "new events")
			again, err := s.poller.Poll(context.Background(), s.base, 50)
			require.NoError(t, err)
			require.Equal(t, ids(s.first.Events), ids(again.Events))
		}},
		{"the cursor moves forward", func(t T, s *state) {
			need(t, s.emitted, "new events")
			next := s.base
			next.Cursor = s.first.Cursor
			res, err := s.poller.Poll(context.Background(), next, 50)
			require.NoError(t, err)
			for _, ev := range res.Events {
				require.False(t, s.seen[ev.ID], "an event polled before the cursor comes back: %s", ev.ID)
			}
			require.NoError(t, s.poller.Ack(context.Background(), s.base, s.first.Cursor))
		}},
		{"a cancelled context returns promptly", func(t T, s *state) {
			need(t, s.created, "create")
			cctx, cancel := context.WithCancel(context.Background())
			cancel()
			done := make(chan struct{})
			go func() {
				defer close(done)
				_, _ = s.poller.Poll(cctx, s.base, 50)
			}()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				require.Fail(t, "Poll ignored a cancelled context")
			}
		}},
		{"status and idempotent cancel", func(t T, s *state) {
			need(t, s.created, "create")
			p := s.h.Provider
			_, err := p.Status(context.Background(), s.handle)
			require.NoError(t, err)
			require.NoError(t, p.Cancel(context.Background(), s.handle))
			require.NoError(t, p.Cancel(context.Background(), s.handle), "cancel is idempotent")
		}},
	}
}

// need skips a check whose prerequisite did not hold.
func need(t T, ok bool, step string) {
	t.Helper()
	if !ok {
		t.Skipf("needs the %q check to pass", step)
	}
}

func ids(evs []sentinel.Event) []string {
	out := make([]string, 0, len(evs))
	for _, e := range evs {
		out = append(out, e.ID)
	}
	return out
}
