package app_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/bus/bustest"
)

// parkedOf waits for n parked records of a sentinel and returns them.
func parkedOf(t *testing.T, n *node, id string, want int) []map[string]any {
	t.Helper()
	var out []map[string]any
	bustest.Eventually(t, 15*time.Second, func() bool {
		out = out[:0]
		for _, p := range n.expect(200, "GET", "/parked?sentinel="+id, nil)["parked"].([]any) {
			out = append(out, p.(map[string]any))
		}
		return len(out) >= want
	}, "%d parked records of %s", want, id)
	return out
}

// inboxIDs lists the event ids in a session's inbox.
func inboxIDs(t *testing.T, n *node, session string) []string {
	t.Helper()
	var ids []string
	for _, m := range n.expect(200, "GET", "/sessions/"+session+"/inbox?limit=500", nil)["messages"].([]any) {
		data, _ := m.(map[string]any)["data"].(map[string]any)
		if id, isID := data["id"].(string); isID {
			ids = append(ids, id)
		}
	}
	return ids
}

// TestReplayHonoursThePostMortemRuleAndDeliversOnce: a post-mortem
// event's replay is refused without force; with force it is delivered,
// and a second replay delivers nothing more. Parked records carry a
// stable id.
func TestReplayHonoursThePostMortemRuleAndDeliversOnce(t *testing.T) {
	t.Parallel()
	n := startNode(t)
	const pr = "github:acme/widgets#7"
	id := n.expect(201, "POST", "/sentinels", map[string]any{"subject": pr, "sessionId": "s1", "provider": "fake", "types": []string{"*"}})["sentinel"].(map[string]any)["id"].(string)
	fk := fakeOf(t, n)
	fk.Emit(journalEvent("evt_closed", "github.pull_request.closed", pr, true), journalEvent("evt_late", "github.check_suite.completed", pr, false))
	n.app.Loop.PollNow(context.Background())
	parked := parkedOf(t, n, id, 1)
	pid := parked[0]["id"].(string)
	require.True(t, strings.HasPrefix(pid, "prk_"), pid)
	require.Equal(t, "evt_late", parked[0]["event"].(map[string]any)["id"])
	require.Equal(t, pid, parkedOf(t, n, id, 1)[0]["id"], "the id is stable across listings")
	require.Equal(t, []string{"evt_closed"}, inboxIDs(t, n, "s1"))

	require.Equal(t, "post_mortem", n.expect(409, "POST", "/parked/"+pid+"/replay", nil)["error"])
	require.Equal(t, []string{"evt_closed"}, inboxIDs(t, n, "s1"))

	rep := n.expect(200, "POST", "/parked/"+pid+"/replay?force=true", nil)["replay"].(map[string]any)
	require.Equal(t, "delivered", rep["decision"])
	require.Equal(t, "s1", rep["session"])
	require.Equal(t, "evt_late", rep["eventId"])
	require.Equal(t, id, rep["sentinelId"])
	require.Equal(t, []string{"evt_closed", "evt_late"}, inboxIDs(t, n, "s1"))

	rep = n.expect(200, "POST", "/parked/"+pid+"/replay?force=true", nil)["replay"].(map[string]any)
	require.Equal(t, "duplicate", rep["decision"])
	require.Equal(t, []string{"evt_closed", "evt_late"}, inboxIDs(t, n, "s1"), "replaying twice delivers once")

	ds := waitDecisions(t, n, id, 4)
	require.Equal(t, "replayed", ds[len(ds)-1].(map[string]any)["decision"])
	require.Contains(t, ds[len(ds)-1].(map[string]any)["reason"], "replay of "+pid+": duplicate")

	require.Equal(t, "parked_not_found", n.expect(404, "POST", "/parked/prk_999999/replay", nil)["error"])
	require.Equal(t, "parked_not_found", n.expect(404, "POST", "/parked/nope/replay", nil)["error"])
	require.Equal(t, "invalid_input", n.expect(400, "POST", "/parked/"+pid+"/replay?force=perhaps", nil)["error"])
}

// TestReplayGoesToTheCurrentTarget: an event parked for a dead target is
// delivered by a replay once the session is back.
func TestReplayGoesToTheCurrentTarget(t *testing.T) {
	t.Parallel()
	n := startNode(t)
	const pr = "github:acme/widgets#9"
	n.expect(201, "POST", "/sessions", map[string]any{"id": "s9"})
	id := n.expect(201, "POST", "/sentinels", map[string]any{"subject": pr, "sessionId": "s9", "provider": "fake", "types": []string{"*"}})["sentinel"].(map[string]any)["id"].(string)
	n.expect(200, "DELETE", "/sessions/s9", nil)
	fakeOf(t, n).Emit(journalEvent("evt_9", "github.check_suite.completed", pr, false))
	n.app.Loop.PollNow(context.Background())
	parked := parkedOf(t, n, id, 1)
	require.Equal(t, "dead-target", waitDecisions(t, n, id, 1)[0].(map[string]any)["decision"])

	rep := n.expect(200, "POST", "/parked/"+parked[0]["id"].(string)+"/replay", nil)["replay"].(map[string]any)
	require.Equal(t, "dead-target", rep["decision"], "still dead: parked again")

	n.expect(200, "POST", "/sessions", map[string]any{"id": "s9"})
	rep = n.expect(200, "POST", "/parked/"+parked[0]["id"].(string)+"/replay", nil)["replay"].(map[string]any)
	require.Equal(t, "delivered", rep["decision"], "%v", rep)
	require.Equal(t, []string{"evt_9"}, inboxIDs(t, n, "s9"))
}
