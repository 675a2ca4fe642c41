package app_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/runtime/app"
)

// A node listening on every address (a container's 0.0.0.0) names itself
// by loopback in daemon.json, so a client on the machine (`docker exec
// node1 sentinel list`) reaches it and passes the Host check; [::] would
// be refused as forbidden_host.
func TestNodeOnEveryAddressNamesItselfByLoopback(t *testing.T) {
	t.Parallel()
	cfg := app.DefaultConfig()
	cfg.Home = t.TempDir()
	cfg.Listen = "0.0.0.0:0"
	cfg.AllowRemote = true
	cfg.AllowInsecureRemote = true // no TLS: the test's own machine
	cfg.NATS.SyncAlways = false
	node, err := app.New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	require.NoError(t, node.Start(context.Background()))
	t.Cleanup(func() { _ = node.Stop(context.Background()) })

	require.True(t, strings.HasPrefix(node.URL(), "http://127.0.0.1:"), node.URL())
	raw, err := os.ReadFile(filepath.Join(cfg.Home, app.DaemonFile))
	require.NoError(t, err)
	var info app.DaemonInfo
	require.NoError(t, json.Unmarshal(raw, &info))
	require.Equal(t, node.URL(), info.URL)

	req, err := http.NewRequest(http.MethodGet, info.URL+"/sentinels", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+node.Token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "the daemon.json URL passes the Host check")
}
