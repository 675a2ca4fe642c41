package app_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/bus/bustest"
	"github.com/agentproto/sentinel/bus/embedded"
	"github.com/agentproto/sentinel/runtime/app"
)

// A node whose routes name other nodes, without cluster.token and without
// a secret in its home, is refused at once with a named error that says
// how to make one (a secret of its own would match no peer: it would wait
// cluster.wait for routes that never come up).
func TestNodeRoutingToOthersWithoutASecretIsRefused(t *testing.T) {
	cfg := clusterConfigs(t, 2)[0]
	cfg.Cluster.Token = ""
	began := time.Now()
	a, err := app.New(cfg, testLogger(t, "n1"))
	if a != nil {
		_ = a.Stop(context.Background())
	}
	require.True(t, errors.Is(err, app.ErrClusterTokenRequired), "%v", err)
	require.Contains(t, err.Error(), "AGENTPROTO_CLUSTER_TOKEN_FILE")
	require.Contains(t, err.Error(), "openssl rand -hex 32")
	require.Less(t, time.Since(began), cfg.Cluster.Wait, "refused before waiting for peers")
	_, statErr := os.Stat(filepath.Join(cfg.Home, app.ClusterTokenFile))
	require.True(t, errors.Is(statErr, os.ErrNotExist), "no secret of its own was made")
}

// cluster.token takes the API token's minimum, and its error never
// quotes it.
func TestClusterTokenMinimumLength(t *testing.T) {
	cfg := clusterConfigs(t, 1)[0]
	cfg.Cluster.Token = "short-route-secret"
	err := cfg.Validate()
	require.Error(t, err)
	require.Contains(t, err.Error(), "cluster.token")
	require.Contains(t, err.Error(), "32")
	require.NotContains(t, err.Error(), "short-route-secret")
}

// The review's attack on a loopback cluster started without
// cluster.token: a raw client connected to a route port as a route,
// without credentials, and was taken. Now routes always authenticate. A
// node without cluster.token whose routes name no other node (the first
// one) generates <home>/cluster-token (0600, named in the log, never its
// value); the others are given that file's content
// (AGENTPROTO_CLUSTER_TOKEN_FILE in the CLI), the three form one cluster,
// and the first node's route listener refuses a route without the secret.
func TestFirstNodesRouteSecretIsSharedAndRequired(t *testing.T) {
	cfgs := clusterConfigs(t, 3)
	first := cfgs[0]
	first.Cluster.Token = ""
	first.Cluster.Routes = []string{"nats://" + first.Cluster.Listen} // itself only
	logs := &syncBuffer{}
	apps := make([]*app.App, 3)
	errs := make([]error, 3)
	var wg sync.WaitGroup
	wg.Go(func() { apps[0], errs[0] = app.New(first, slog.New(slog.NewTextHandler(logs, nil))) })
	path := filepath.Join(first.Home, app.ClusterTokenFile)
	bustest.Eventually(t, 30*time.Second, func() bool { _, err := os.Stat(path); return err == nil }, "the first node writes %s", path)
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	secret := strings.TrimSpace(string(raw))
	for i := 1; i < 3; i++ {
		cfgs[i].Cluster.Token = secret
		wg.Go(func() { apps[i], errs[i] = app.New(cfgs[i], testLogger(t, fmt.Sprintf("n%d", i+1))) })
	}
	wg.Wait()
	for i := range apps {
		require.NoError(t, errs[i], "node %d", i+1)
		require.NoError(t, apps[i].Start(context.Background()))
		t.Cleanup(func() { _ = apps[i].Stop(context.Background()) })
	}
	a, c := &node{t: t, app: apps[0]}, &node{t: t, app: apps[2]}
	out := a.expect(201, "POST", "/sentinels", map[string]any{"subject": "github:o/r#1", "sessionId": "s1", "provider": "fake"})
	id := out["sentinel"].(map[string]any)["id"].(string)
	bustest.Eventually(t, 10*time.Second, func() bool {
		resp, _ := c.req("GET", "/sentinels/"+id, nil)
		return resp.StatusCode == 200
	}, "created on the first node, seen on the third")

	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	require.GreaterOrEqual(t, len(secret), embedded.MinRouteTokenLen)
	require.Contains(t, logs.String(), path, "the log names the file")
	require.NotContains(t, logs.String(), secret, "never the secret")

	listen := first.Cluster.Listen
	require.Contains(t, bustest.RouteHandshake(t, listen, first.Cluster.Name, "", ""), "Authorization Violation", "no credentials")
	require.Contains(t, bustest.RouteHandshake(t, listen, first.Cluster.Name, "sentinel-route", "guess"), "Authorization Violation", "a guess")
	require.Equal(t, "PONG", bustest.RouteHandshake(t, listen, first.Cluster.Name, "sentinel-route", embedded.RoutePassword(secret)), "the secret's credentials")
}
