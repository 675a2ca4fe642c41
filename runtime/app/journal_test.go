package app_test

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus/bustest"
	"github.com/agentproto/sentinel/providers/fake"
)

// fakeOf returns the node's fake provider.
func fakeOf(t *testing.T, n *node) *fake.Provider {
	t.Helper()
	p, ok := n.app.Registry.Get("fake")
	require.True(t, ok)
	return p.(*fake.Provider)
}

func journalEvent(id, typ, subject string, terminal bool) sentinel.Event {
	return sentinel.NewEvent(id, "//agentproto.local/sentinel/fake", typ, subject, []string{subject, "github:acme/widgets"},
		time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC), typ+" on "+subject, terminal, map[string]any{"n": id})
}

// waitDecisions polls GET /sentinels/{id}/decisions until it lists n.
func waitDecisions(t *testing.T, n *node, id string, want int) []any {
	t.Helper()
	var ds []any
	bustest.Eventually(t, 15*time.Second, func() bool {
		ds = n.expect(200, "GET", "/sentinels/"+id+"/decisions", nil)["decisions"].([]any)
		return len(ds) >= want
	}, "%d decisions of %s (have %d)", want, id, len(ds))
	return ds
}

// TestDecisionRoutesTellWhatHappened: the decisions of a sentinel over
// HTTP (paged with after), an event's story, and the named errors.
func TestDecisionRoutesTellWhatHappened(t *testing.T) {
	t.Parallel()
	n := startNode(t)
	const pr = "github:acme/widgets#7"
	v := n.expect(201, "POST", "/sentinels", map[string]any{"subject": pr, "sessionId": "s1", "provider": "fake",
		"types": []string{"github.check_suite.*"}})["sentinel"].(map[string]any)
	id := v["id"].(string)
	fk := fakeOf(t, n)
	fk.Emit(journalEvent("evt_ci", "github.check_suite.completed", pr, false), journalEvent("evt_chat", "github.issue_comment.created", pr, false))
	n.app.Loop.PollNow(context.Background())
	ds := waitDecisions(t, n, id, 2)
	first, second := ds[0].(map[string]any), ds[1].(map[string]any)
	require.Equal(t, "delivered", first["decision"])
	require.Equal(t, "evt_ci", first["eventId"])
	require.Equal(t, "s1", first["session"])
	require.NotEmpty(t, first["messageId"])
	require.Equal(t, "filtered", second["decision"])
	require.Equal(t, "type", second["clauses"].([]any)[0].(map[string]any)["failed"])

	page := n.expect(200, "GET", "/sentinels/"+id+"/decisions?limit=1", nil)
	require.Len(t, page["decisions"].([]any), 1)
	require.Equal(t, "evt_chat", page["decisions"].([]any)[0].(map[string]any)["eventId"], "the newest first page")
	next := page["next"].(float64)
	after := n.expect(200, "GET", "/sentinels/"+id+"/decisions?after="+jsonNum(next), nil)
	require.Empty(t, after["decisions"].([]any))
	require.Equal(t, next, after["next"])

	story := n.expect(200, "GET", "/events/"+url.PathEscape("evt_ci"), nil)["event"].(map[string]any)
	require.Equal(t, "github.check_suite.completed", story["type"])
	require.Equal(t, pr, story["subject"])
	require.NotEmpty(t, story["received"])
	require.Len(t, story["decisions"].([]any), 1)

	require.Equal(t, "event_not_found", n.expect(404, "GET", "/events/evt_nobody", nil)["error"])
	require.Equal(t, "sentinel_not_found", n.expect(404, "GET", "/sentinels/sen_nobody/decisions", nil)["error"])
	require.Equal(t, "invalid_input", n.expect(400, "GET", "/sentinels/"+id+"/decisions?limit=0", nil)["error"])
	require.Equal(t, "invalid_input", n.expect(400, "GET", "/sentinels/"+id+"/decisions?after=x", nil)["error"])

	// A removed sentinel keeps its history.
	n.expect(200, "DELETE", "/sentinels/"+id, nil)
	require.Len(t, n.expect(200, "GET", "/sentinels/"+id+"/decisions", nil)["decisions"].([]any), 2)
}
