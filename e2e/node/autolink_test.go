package node_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestAutoLinkReadsTheConfigFreshOnEveryPR flips sentinel.auto_watch_prs in
// config.yaml while the node runs: the next recorded PR follows the file,
// with no restart.
func TestAutoLinkReadsTheConfigFreshOnEveryPR(t *testing.T) {
	home := t.TempDir()
	cfgPath := filepath.Join(home, "config.yaml")
	require.NoError(t, os.WriteFile(cfgPath, []byte("sentinel:\n  auto_watch_prs: false\n"), 0o600))
	n := startNode(t, home)
	require.Equal(t, 201, n.do("POST", "/sessions", map[string]any{"id": "al1"}, n.token).status)

	countAuto := func() int {
		a := n.do("GET", "/sentinels", nil, n.token)
		c := 0
		for _, s := range a.body["sentinels"].([]any) {
			if l, _ := s.(map[string]any)["label"].(string); l != "" {
				c++
			}
		}
		return c
	}
	require.Equal(t, 202, n.do("POST", "/sessions/al1/prs", map[string]any{"url": "https://github.com/acme/widgets/pull/1", "state": "open"}, n.token).status)
	// Auto-link runs after the 202: wait until the node says it skipped it.
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(n.logs.String(), "auto-link skipped: sentinel.autoWatchPrs is off") {
		require.True(t, time.Now().Before(deadline), "the node never evaluated the first PR")
		time.Sleep(20 * time.Millisecond)
	}
	require.Zero(t, countAuto(), "auto-link is off in config.yaml")

	require.NoError(t, os.WriteFile(cfgPath, []byte("sentinel:\n  auto_watch_prs: true\n"), 0o600))
	require.Equal(t, 202, n.do("POST", "/sessions/al1/prs", map[string]any{"url": "https://github.com/acme/widgets/pull/2", "state": "open"}, n.token).status)
	deadline = time.Now().Add(15 * time.Second)
	for countAuto() == 0 {
		require.True(t, time.Now().Before(deadline), "the PR recorded after the edit is auto-linked")
		time.Sleep(20 * time.Millisecond)
	}
	a := n.do("GET", "/sentinels", nil, n.token)
	s := a.body["sentinels"].([]any)[0].(map[string]any)
	require.Equal(t, "auto:pr#2", s["label"])
	require.Equal(t, "al1", s["group"])
}
