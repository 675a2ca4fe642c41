package node_test

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestServeCreateRestartFindAgain(t *testing.T) {
	home := t.TempDir()
	n := startNode(t, home)

	// Auth: every API route needs the bearer token; health does not.
	require.Equal(t, http.StatusUnauthorized, n.do("GET", "/sentinels", nil, "").status)
	require.Equal(t, http.StatusUnauthorized, n.do("GET", "/sentinels", nil, "wrong").status)
	require.Equal(t, "unauthorized", n.do("GET", "/sentinels", nil, "").body["error"])
	require.Equal(t, http.StatusOK, n.do("GET", "/healthz", nil, "").status)

	// Named 400s.
	bad := []struct {
		name, body, code string
	}{
		{"malformed json", `{"subject":`, "malformed_json"},
		{"not an object", `[1,2]`, "malformed_json"},
		{"unknown field", `{"subject":"github:a/b#1","sessionId":"s1","bogus":true}`, "unknown_field"},
		{"bad subject", `{"subject":"nope","sessionId":"s1"}`, "invalid_subject"},
		{"missing subject", `{"sessionId":"s1"}`, "missing_subject"},
		{"ambiguous", `{"subject":"github:a/b#1","prUrl":"https://github.com/a/b/pull/1","sessionId":"s1"}`, "ambiguous_subject"},
		{"bad pr url", `{"prUrl":"https://example.com/x","sessionId":"s1"}`, "invalid_pr_url"},
		{"no session", `{"subject":"github:a/b#1"}`, "no_caller_identity"},
		{"unknown provider", `{"subject":"github:a/b#1","sessionId":"s1","provider":"nope"}`, "unknown_provider"},
		{"frozen target", `{"subject":"github:a/b#1","sessionId":"s1","until":{"kind":"soon"}}`, "invalid_until"},
		{"oversized", `{"subject":"github:a/b#1","sessionId":"s1","label":"` + strings.Repeat("x", 2<<20) + `"}`, "body_too_large"},
	}
	for _, tc := range bad {
		a := n.do("POST", "/sentinels", tc.body, n.token)
		require.Equal(t, http.StatusBadRequest, a.status, "%s: %s", tc.name, a.raw)
		require.Equal(t, tc.code, a.body["error"], "%s: %s", tc.name, a.raw)
		require.NotEmpty(t, a.body["message"], tc.name)
	}
	// Named 403s and the /mcp body cap.
	refused := []struct {
		name, method, path, body string
		hdr                      []string
		status                   int
		code                     string
	}{
		{"foreign host", "GET", "/sentinels", "", []string{"Host", "evil.example"}, http.StatusForbidden, "forbidden_host"},
		{"foreign origin", "POST", "/sentinels", `{"subject":"github:a/b#1","sessionId":"s1"}`, []string{"Origin", "http://evil.example"}, http.StatusForbidden, "forbidden_origin"},
		{"cross-site fetch", "DELETE", "/sentinels/sen_x", "", []string{"Sec-Fetch-Site", "cross-site"}, http.StatusForbidden, "forbidden_origin"},
		{"oversized mcp", "POST", "/mcp", mcpWatch(2 << 20), []string{"Content-Type", "application/json", "Accept", "application/json, text/event-stream",
			"MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", "sentinel_watch", "X-Agentproto-Session", "s1"}, http.StatusBadRequest, "body_too_large"},
	}
	for _, tc := range refused {
		a := n.doWith(tc.method, tc.path, tc.body, n.token, tc.hdr...)
		require.Equal(t, tc.status, a.status, "%s: %s", tc.name, a.raw)
		require.Equal(t, tc.code, a.body["error"], "%s: %s", tc.name, a.raw)
		require.NotEmpty(t, a.body["message"], tc.name)
	}

	a := n.do("GET", "/sentinels/sen_01JAB2C3D4E5F6G7H8J9K0L1M2", nil, n.token)
	require.Equal(t, http.StatusNotFound, a.status)
	require.Equal(t, "sentinel_not_found", a.body["error"])
	require.Equal(t, http.StatusNotFound, n.do("DELETE", "/sentinels/sen_nope", nil, n.token).status)

	// Create with the fake provider.
	a = n.do("POST", "/sentinels", map[string]any{"prUrl": "https://github.com/acme/widgets/pull/7", "sessionId": "s1", "provider": "fake"}, n.token)
	require.Equal(t, http.StatusCreated, a.status, a.raw)
	sen := a.body["sentinel"].(map[string]any)
	id := sen["id"].(string)
	require.Equal(t, "active", sen["status"])
	require.NotContains(t, a.raw, "handle")
	require.NotContains(t, a.raw, "hookKey")

	// SIGTERM exits 0 promptly.
	took, err := n.stop()
	require.NoError(t, err, n.logs.String())
	require.Less(t, took, 10*time.Second)
	_, statErr := os.Stat(filepath.Join(home, "daemon.json"))
	require.True(t, os.IsNotExist(statErr), "daemon.json is removed on a clean stop")

	// Restart on the same home: the sentinel is still there.
	n2 := startNode(t, home)
	a = n2.do("GET", "/sentinels/"+id, nil, n2.token)
	require.Equal(t, http.StatusOK, a.status, a.raw)
	require.Equal(t, id, a.body["sentinel"].(map[string]any)["id"])
	a = n2.do("GET", "/sentinels", nil, n2.token)
	require.Len(t, a.body["sentinels"], 1)
	a = n2.do("DELETE", "/sentinels/"+id, nil, n2.token)
	require.Equal(t, http.StatusOK, a.status)
	require.Equal(t, true, a.body["removed"])

	// Files holding secrets are 0600; the JetStream folder is 0700.
	for _, f := range []string{"daemon-token", "daemon.json"} {
		st, err := os.Stat(filepath.Join(home, f))
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), st.Mode().Perm(), f)
	}
	st, err := os.Stat(filepath.Join(home, "jetstream"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), st.Mode().Perm())
}

func TestSecondNodeOnSameHomeIsRefused(t *testing.T) {
	home := t.TempDir()
	startNode(t, home)
	cmd := exec.Command(binary, "serve", "--listen", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), "AGENTPROTO_HOME="+home)
	out, err := cmd.CombinedOutput()
	require.Error(t, err)
	require.Contains(t, string(out), "another sentinel node is already running")
}

func TestServeRefusesRemoteListenWithoutFlag(t *testing.T) {
	cmd := exec.Command(binary, "serve", "--listen", "0.0.0.0:0")
	cmd.Env = append(os.Environ(), "AGENTPROTO_HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	require.Error(t, err)
	require.Contains(t, string(out), "--allow-remote")
}
