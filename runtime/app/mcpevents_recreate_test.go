package app_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/runtime/app"
	"github.com/agentproto/sentinel/runtime/pause"
	"github.com/agentproto/sentinel/runtime/subscriptions"
)

// Issue 21, item 9: two polls of a subscription whose sentinel the
// server removed re-create it at once. Poll A creates its sentinel and
// pauses before pointing the record at it (subscriptions.PointRecreated);
// poll B re-creates and points the record at its own; A resumes. Before,
// A overwrote the record and B's sentinel leaked (watching, unreferenced);
// now A finds the record moved, drops its own and uses B's.
func TestConcurrentRecreatesOfARemovedSubscriptionSentinelLeakNothing(t *testing.T) {
	t.Parallel()
	points := pause.New()
	a := mcpEventsNode(t, t.TempDir(), nil, app.WithPause(points))
	c := newSEPClient(t, a.URL(), a.Token)
	args := fakeArgs("fake:poll-race/1")
	boot := c.poll("sentinel.event", args, nil, nil)
	sen := subscriptionSentinel(t, a.URL(), a.Token, "poll", "fake:poll-race/1")
	removeSentinel(t, a, sen.ID)

	held := points.Hold(subscriptions.PointRecreated, "")
	done := make(chan struct{})
	go func() { defer close(done); c.poll("sentinel.event", args, boot.Cursor, nil) }()
	<-held.Reached()
	c.poll("sentinel.event", args, boot.Cursor, nil)
	held.Release()
	<-done

	n := 0
	for _, s := range sentinelsOf(t, a.URL(), a.Token) {
		if s.Target.Kind == "mcp-events" && len(s.Match) > 0 && s.Match[0].Subject == "fake:poll-race/1" {
			n++
		}
	}
	require.Equal(t, 1, n, "one sentinel behind the subscription")
}
