package sessions_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus/bustest"
	"github.com/agentproto/sentinel/runtime/deliver"
	"github.com/agentproto/sentinel/runtime/runtimetest"
)

// TestResumeHookLongerThanTheHandleDeadlineParksOnce: a resume hook whose
// own timeout (the API allows 120 s) outlasts the handle deadline used to
// be killed by that deadline, fail to park on the expired context, and run
// again on every redelivery, forever. It is now stopped inside the
// deadline with room to park, and the event is parked once.
func TestResumeHookLongerThanTheHandleDeadlineParksOnce(t *testing.T) {
	e := newEnv(t)
	// Delivery workers with a short handle deadline replace the env's.
	e.Workers.Stop()
	w, err := deliver.NewWorkers(e.Bus.Bus, e.Pipeline,
		deliver.WithConfig(deliver.WorkersConfig{RetryBase: 20 * time.Millisecond, RetryMax: 100 * time.Millisecond, HandleTimeout: 1500 * time.Millisecond, MaxAttempts: 50}))
	require.NoError(t, err)
	require.NoError(t, w.Start(context.Background()))
	t.Cleanup(w.Stop)

	runs := filepath.Join(t.TempDir(), "runs")
	slow := &sentinel.Hook{Command: []string{"sh", "-c", "echo run >> " + runs + "; exec sleep 30"}, TimeoutMs: 120000}
	e.register(t, sentinel.RegisterSession{ID: "slow", Hooks: &sentinel.SessionHooks{Resume: slow}})
	rec := e.Watch(sentinel.WatchRequest{Subject: "github:acme/slow#1", SessionID: "slow", Types: []string{"*"}, Provider: "fake"})
	require.NoError(t, e.Reg.Report(context.Background(), "slow", sentinel.SessionReport{Kind: sentinel.FollowCrashed}))
	e.Fake.Emit(runtimetest.Event("evt_1", "github.check_suite.completed", "github:acme/slow#1", false))
	e.Loop.PollNow(context.Background())

	bustest.Eventually(t, 10*time.Second, func() bool { return e.Get(rec.ID).EventCount == 1 }, "the event to be handled")
	e.Drained()
	reasons := parkedReasons(t, e, rec.ID)
	require.Len(t, reasons, 1)
	require.Contains(t, reasons[0], "could not resume session slow")
	require.Contains(t, reasons[0], "delivery.handle_timeout")
	require.Equal(t, sentinel.StatusOrphaned, e.Get(rec.ID).Status)
	out, err := os.ReadFile(runs)
	require.NoError(t, err)
	require.Equal(t, 1, strings.Count(string(out), "run"), "the hook ran once")
}
