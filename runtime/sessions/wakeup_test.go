package sessions_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus/bustest"
	"github.com/agentproto/sentinel/runtime/runtimetest"
	"github.com/agentproto/sentinel/runtime/sessions"
)

// Issue 21, item 7: node A stores the event's inbox message and dies
// before it hands the message to the notify hook (sessions.PointNotify
// fails: the event stays unacknowledged). Node B gets the event again; the
// message is already there (a duplicate), and B must still wake the
// session: before, only a new message ran the hook, so this wake-up was
// lost for good. B wakes it once, however often the event comes again.
func TestAWakeUpLostWithANodeIsRunByTheRedelivery(t *testing.T) {
	a := newEnvWith(t, runtimetest.Options{NoWorkers: true, LeaderReads: true})
	b := joinEnv(t, a, runtimetest.Options{NoWorkers: true})
	var calls atomic.Int64
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { calls.Add(1) }))
	t.Cleanup(hook.Close)
	a.register(t, sentinel.RegisterSession{ID: "s1", Hooks: &sentinel.SessionHooks{Notify: &sentinel.Hook{URL: hook.URL, TimeoutMs: 5000}}})
	rec := a.Watch(sentinel.WatchRequest{Subject: "github:acme/w#1", SessionID: "s1", Types: []string{"*"}, Provider: "fake"})
	ev := runtimetest.Event("evt_1", "x.y.z", "github:acme/w#1", false)

	a.Pause.Fail(sessions.PointNotify, "", 1, nil)
	_, err := a.Pipeline.Handle(context.Background(), rec.ID, &ev)
	require.Error(t, err, "A died after its inbox write")
	require.Len(t, a.InboxOf("s1"), 1, "the message is stored")

	for range 2 {
		_, err = b.Pipeline.Handle(context.Background(), rec.ID, &ev)
		require.NoError(t, err)
	}
	bustest.Eventually(t, 10*time.Second, func() bool { return calls.Load() > 0 }, "B runs the notify hook")
	b.Notifier.Stop() // waits for the hooks in flight
	require.Equal(t, int64(1), calls.Load(), "one wake-up")
	require.Len(t, b.InboxOf("s1"), 1)
}
