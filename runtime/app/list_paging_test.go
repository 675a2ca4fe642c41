package app_test

import (
	"context"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/ingress/api"
	"github.com/agentproto/sentinel/ingress/apiclient"
)

// GET /sentinels over the real node: without paging parameters every
// sentinel (the pinned API); with limit and after pages that end with no
// next; filters; named errors for bad parameters.
func TestListSentinelsPagesAndFilters(t *testing.T) {
	t.Parallel()
	n := startNode(t)
	var ids []string
	for i := range 12 {
		session := "s1"
		if i%3 == 0 {
			session = "s2"
		}
		out := n.expect(201, "POST", "/sentinels", map[string]any{"subject": "github:o/r#" + string(rune('1'+i%9)), "sessionId": session, "provider": "fake", "allowDuplicate": true})
		ids = append(ids, out["sentinel"].(map[string]any)["id"].(string))
	}

	all := n.expect(200, "GET", "/sentinels", nil)
	require.Len(t, all["sentinels"], 12)
	require.NotContains(t, all, "next", "an unpaged answer has no next")
	var listed []string
	for _, v := range all["sentinels"].([]any) {
		listed = append(listed, v.(map[string]any)["id"].(string))
	}
	require.ElementsMatch(t, ids, listed)

	var paged []string
	path := "/sentinels?limit=5"
	for pages := 0; ; pages++ {
		require.Less(t, pages, 4)
		out := n.expect(200, "GET", path, nil)
		for _, v := range out["sentinels"].([]any) {
			paged = append(paged, v.(map[string]any)["id"].(string))
		}
		next, ok := out["next"].(string)
		if !ok {
			break
		}
		path = "/sentinels?limit=5&after=" + url.QueryEscape(next)
	}
	require.Equal(t, listed, paged, "every sentinel once, in the unpaged order (oldest first)")

	require.Len(t, n.expect(200, "GET", "/sentinels?session=s2", nil)["sentinels"], 4)
	require.Len(t, n.expect(200, "GET", "/sentinels?provider=fake&status=active&subject=github:o/r%231", nil)["sentinels"], 2)
	require.Empty(t, n.expect(200, "GET", "/sentinels?status=error", nil)["sentinels"])

	for _, bad := range []struct{ query, code string }{
		{"limit=0", "invalid_input"}, {"limit=1001", "invalid_input"}, {"limit=x", "invalid_input"},
		{"status=bogus", "invalid_input"}, {"session=-x", "invalid_session_id"}, {"after=nope", "invalid_input"},
	} {
		require.Equal(t, bad.code, n.expect(400, "GET", "/sentinels?"+bad.query, nil)["error"], bad.query)
	}

	// The typed client reads the same pages.
	c := apiclient.Sentinels{C: apiclient.New(n.app.URL(), n.app.Token)}
	p, err := c.ListPage(context.Background(), api.SentinelQuery{Session: "s1", Limit: 3})
	require.NoError(t, err)
	require.Len(t, p.Sentinels, 3)
	require.NotEmpty(t, p.Next)
	p, err = c.ListPage(context.Background(), api.SentinelQuery{Session: "s1", Limit: 10, After: p.Next})
	require.NoError(t, err)
	require.Len(t, p.Sentinels, 5)
	require.Empty(t, p.Next)
}
