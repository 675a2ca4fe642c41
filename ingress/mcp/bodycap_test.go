package mcp_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	smcp "github.com/agentproto/sentinel/ingress/mcp"
)

// watchCall is a tools/call of sentinel_watch whose label pads it to about
// size bytes.
func watchCall(size int) string {
	return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}},"name":"sentinel_watch","arguments":` +
		`{"subject":"github:o/r#1","label":"` + strings.Repeat("x", size) + `"}}}`
}

func TestOversizedBodiesAreRefusedBeforeMCPSeesThem(t *testing.T) {
	const limit = 4 << 10
	f := &fakeServices{}
	srv := httptest.NewServer(smcp.HTTPHandler(smcp.NewServer(services(f), smcp.Options{}), nil, limit))
	t.Cleanup(srv.Close)
	post := func(body io.Reader) (int, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, srv.URL, body)
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", smcp.ToolWatch)
		req.Header.Set(smcp.HeaderSession, "s1")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(raw)
	}
	watched := func() sentinel.WatchRequest {
		f.mu.Lock()
		defer f.mu.Unlock()
		w := f.watch
		f.watch = sentinel.WatchRequest{}
		return w
	}

	// The same call under the cap is processed (so the refusals below are
	// the cap's doing, not a malformed call).
	status, raw := post(strings.NewReader(watchCall(limit / 2)))
	require.Equal(t, http.StatusOK, status, raw)
	require.Equal(t, "github:o/r#1", watched().Subject, raw)

	cases := []struct {
		name string
		body io.Reader
	}{
		{"declared length over the cap", strings.NewReader(watchCall(limit))},
		// io.MultiReader hides the length: the client sends it chunked.
		{"chunked body over the cap", io.MultiReader(strings.NewReader(watchCall(limit)))},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, raw := post(tc.body)
			require.Equal(t, http.StatusBadRequest, status, raw)
			var out map[string]any
			require.NoError(t, json.Unmarshal([]byte(raw), &out), raw)
			require.Equal(t, "body_too_large", out["error"])
			require.Contains(t, out["message"], "4096 bytes")
			require.Empty(t, watched().Subject, "the oversized call was never processed")
		})
	}
}
