package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/ingress/api"
)

// pagedNode serves GET /sentinels from n sentinels in pages (limit and
// after as the node reads them; the cursor is the index of the last one
// answered) and records every query.
type pagedNode struct {
	mu      sync.Mutex
	n       int
	queries []string
}

func (p *pagedNode) start(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.queries = append(p.queries, r.URL.RawQuery)
		p.mu.Unlock()
		q := r.URL.Query()
		limit, _ := strconv.Atoi(q.Get("limit"))
		start := 0
		if a := q.Get("after"); a != "" {
			i, _ := strconv.Atoi(strings.TrimPrefix(a, "cur"))
			start = i + 1
		}
		end := p.n
		if limit > 0 {
			end = min(p.n, start+limit)
		}
		var vs []map[string]any
		for i := start; i < end; i++ {
			vs = append(vs, map[string]any{"id": fmt.Sprintf("sen_%04d", i), "provider": "fake", "status": "active",
				"match": []map[string]any{{"subject": "github:o/r#1"}}, "until": map[string]any{"kind": "never"},
				"target": map[string]any{"kind": "session", "sessionId": "s1"}, "createdTs": i})
		}
		out := map[string]any{"ok": true, "sentinels": vs}
		if end < p.n {
			out["next"] = fmt.Sprintf("cur%d", end-1)
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestListFollowsPages(t *testing.T) {
	cases := []struct {
		name        string
		n           int
		args        []string
		wantIDs     int
		wantQueries []string
		wantNext    bool
	}{
		{name: "every page", n: 1234, args: []string{"list", "--json"}, wantIDs: 1234,
			wantQueries: []string{"limit=500", "after=cur499&limit=500", "after=cur999&limit=500"}},
		{name: "limit stops early", n: 1234, args: []string{"list", "--json", "--limit", "600"}, wantIDs: 600, wantNext: true,
			wantQueries: []string{"limit=500", "after=cur499&limit=100"}},
		{name: "filters travel on every page", n: 700, args: []string{"list", "--json", "--status", "error", "--provider", "local-gh", "--session", "s1", "--subject", "github:o/r"}, wantIDs: 700,
			wantQueries: []string{"limit=500&provider=local-gh&session=s1&status=error&subject=github%3Ao%2Fr", "after=cur499&limit=500&provider=local-gh&session=s1&status=error&subject=github%3Ao%2Fr"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			node := &pagedNode{n: tc.n}
			code, out, errOut := runVerb(t, node.start(t), "", tc.args...)
			require.Equal(t, 0, code, errOut)
			var got struct {
				Sentinels []struct {
					ID string `json:"id"`
				} `json:"sentinels"`
				Next string `json:"next"`
			}
			require.NoError(t, json.Unmarshal([]byte(out), &got))
			require.Len(t, got.Sentinels, tc.wantIDs)
			for i, v := range got.Sentinels {
				require.Equal(t, fmt.Sprintf("sen_%04d", i), v.ID, "in order, no gap, no repeat")
			}
			require.Equal(t, tc.wantNext, got.Next != "")
			require.Equal(t, tc.wantQueries, node.queries)
		})
	}
}

func TestListTableAndBadFilters(t *testing.T) {
	node := &pagedNode{n: 3}
	url := node.start(t)
	code, out, errOut := runVerb(t, url, "", "list", "--limit", "2")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "sen_0001")
	require.NotContains(t, out, "sen_0002")
	require.Contains(t, out, "--limit stopped the listing")

	for _, args := range [][]string{{"list", "--status", "bogus"}, {"list", "--session", "-x"}, {"list", "--limit", "-1"}} {
		code, _, errOut = runVerb(t, url, "", args...)
		require.Equal(t, api.ExitUsage, code, "%v: %s", args, errOut)
	}
}
