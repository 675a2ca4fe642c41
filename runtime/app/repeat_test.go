package app_test

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The client repeats a DELETE whose answer was lost on the next node
// (ingress/apiclient): removing what is already gone must answer a
// catalogue 404 (or 200 for ending an ended session), never a 5xx.
func TestDeletesAreSafeToRepeat(t *testing.T) {
	t.Parallel()
	n := startNode(t)
	id := n.expect(201, "POST", "/sentinels", map[string]any{"subject": "github:o/r#1", "sessionId": "s1", "provider": "fake"})["sentinel"].(map[string]any)["id"].(string)
	n.expect(200, "DELETE", "/sentinels/"+id, nil)
	require.Equal(t, "sentinel_not_found", n.expect(404, "DELETE", "/sentinels/"+id, nil)["error"])

	n.expect(201, "POST", "/sessions", map[string]any{"id": "chief"})
	fid := n.expect(201, "POST", "/follows", map[string]any{"follower": "chief", "selector": map[string]any{"all": true}})["id"].(string)
	n.expect(200, "DELETE", "/follows/"+fid, nil)
	require.Equal(t, "follow_not_found", n.expect(404, "DELETE", "/follows/"+fid, nil)["error"])

	n.expect(200, "DELETE", "/sessions/chief", nil)
	require.Equal(t, "ended", n.expect(200, "DELETE", "/sessions/chief", nil)["session"].(map[string]any)["status"])
}
