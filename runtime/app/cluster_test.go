package app_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/bus"
	"github.com/agentproto/sentinel/bus/embedded"
	"github.com/agentproto/sentinel/internal/freeport"
	"github.com/agentproto/sentinel/runtime/app"
	"github.com/agentproto/sentinel/runtime/inbox"
	"github.com/agentproto/sentinel/runtime/sentinels"
)

// freePorts reserves n loopback ports below the ephemeral range
// (internal/freeport): no parallel test's :0 listener or outgoing
// connection takes one before its node binds it.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	ports, err := freeport.Take(n)
	require.NoError(t, err)
	return ports
}

// clusterConfigs returns n node configs that route to each other on
// loopback, with one shared API token.
func clusterConfigs(t *testing.T, n int) []app.Config {
	t.Helper()
	ports := freePorts(t, n)
	var routes []string
	for _, p := range ports {
		routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", p))
	}
	// A name and a route secret of its own: a route that reaches another
	// test's server (a port freed here and taken there) is refused instead
	// of merging two clusters.
	var salt [6]byte
	_, _ = rand.Read(salt[:])
	suffix := hex.EncodeToString(salt[:])
	var out []app.Config
	for i := 0; i < n; i++ {
		cfg := app.DefaultConfig()
		cfg.Home = t.TempDir()
		cfg.Listen = "127.0.0.1:0"
		cfg.NATS.SyncAlways = false
		cfg.Testing.FakeProvider = true
		cfg.Node.Name = fmt.Sprintf("n%d", i+1)
		cfg.Cluster.Name = "test-" + suffix
		cfg.Cluster.Listen = fmt.Sprintf("127.0.0.1:%d", ports[i])
		cfg.Cluster.Routes = routes
		cfg.Cluster.Token = "route-secret-for-tests-" + suffix
		cfg.Cluster.Wait = time.Minute
		out = append(out, cfg)
	}
	return out
}

// startCluster builds the nodes, then starts them concurrently, as the
// processes of a cluster start (each waits for a meta leader, which needs
// a majority, and provisions the same streams, idempotently), and
// registers their stop. Started one after the other, every later node
// waited for the earlier ones' whole start (about 10 s a cluster here).
func startCluster(t *testing.T, cfgs []app.Config) []*app.App {
	t.Helper()
	apps := make([]*app.App, len(cfgs))
	errs := make([]error, len(cfgs))
	var wg sync.WaitGroup
	for i := range cfgs {
		wg.Go(func() { apps[i], errs[i] = app.New(cfgs[i], testLogger(t, cfgs[i].Node.Name)) })
	}
	wg.Wait()
	t.Cleanup(func() { stopAll(apps...) })
	for i, err := range errs {
		require.NoError(t, err, "node %d", i+1)
	}
	for i, a := range apps {
		wg.Go(func() { errs[i] = a.Start(context.Background()) })
	}
	wg.Wait()
	for i, err := range errs {
		require.NoError(t, err, "start node %d", i+1)
	}
	return apps
}

func TestClusterProvisionsR3AndServesEveryRoute(t *testing.T) {
	apps := startCluster(t, clusterConfigs(t, 3))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, name := range []string{bus.StreamEvents, inbox.StreamName, "KV_" + sentinels.BucketRecords, "KV_" + sentinels.BucketCreds} {
		s, err := apps[0].Bus.Stream(ctx, name)
		require.NoError(t, err, name)
		info, err := s.Info(ctx)
		require.NoError(t, err)
		require.Equal(t, 3, info.Config.Replicas, name)
		require.NotNil(t, info.Cluster, name)
		require.Len(t, info.Cluster.Replicas, 2, "%s: a leader and two replicas", name)
	}
	a, b, c := &node{t: t, app: apps[0]}, &node{t: t, app: apps[1]}, &node{t: t, app: apps[2]}
	out := a.expect(201, "POST", "/sentinels", map[string]any{"subject": "github:o/r#1", "sessionId": "s1", "provider": "fake"})
	id := out["sentinel"].(map[string]any)["id"].(string)
	require.Eventually(t, func() bool {
		resp, _ := b.req("GET", "/sentinels/"+id, nil)
		return resp.StatusCode == 200
	}, 10*time.Second, 50*time.Millisecond, "created on A, seen on B")
	c.expect(200, "DELETE", "/sentinels/"+id, nil)
	require.Eventually(t, func() bool {
		resp, _ := a.req("GET", "/sentinels/"+id, nil)
		return resp.StatusCode == 404
	}, 10*time.Second, 50*time.Millisecond, "removed on C, gone on A")
	_ = jetstream.StreamInfo{}
}

// stopAll stops the nodes concurrently, as a cluster's processes stop
// together. Stopped one after the other, the last node ran its stop steps
// alone, without quorum, and each step that reads the store waited out its
// timeout (about 10 s a cluster here). A nil node is skipped.
func stopAll(apps ...*app.App) {
	var wg sync.WaitGroup
	for _, a := range apps {
		if a != nil {
			wg.Go(func() { _ = a.Stop(context.Background()) })
		}
	}
	wg.Wait()
}

// testLogger logs warnings to the test log (SENTINEL_TEST_LOG=debug: all).
func testLogger(t *testing.T, name string) *slog.Logger {
	lvl := slog.LevelWarn
	if os.Getenv("SENTINEL_TEST_LOG") == "debug" {
		lvl = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: lvl})).With("node", name)
}

type tWriter struct{ t *testing.T }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// A node cut off from its cluster's quorum says so on /readyz, refuses
// writes with 503 cluster_unavailable (nothing done), serves reads, and
// owns nothing.
func TestCutOffNodeRefusesWritesAndOwnsNothing(t *testing.T) {
	cfgs := clusterConfigs(t, 3)
	for i := range cfgs {
		cfgs[i].Bus.MemberTTL, cfgs[i].Bus.LeaseTTL = 2*time.Second, 3*time.Second
	}
	apps := startCluster(t, cfgs)
	c := &node{t: t, app: apps[2]}
	out := c.expect(201, "POST", "/sentinels", map[string]any{"subject": "github:o/r#1", "sessionId": "s1", "provider": "fake"})
	id := out["sentinel"].(map[string]any)["id"].(string)
	c.expect(201, "POST", "/sessions", map[string]any{"id": "chief"})
	c.expect(201, "POST", "/sessions", map[string]any{"id": "worker-1"})
	c.expect(201, "POST", "/follows", map[string]any{"follower": "chief", "selector": map[string]any{"sessionIds": []string{"worker-1"}}})
	require.Eventually(t, func() bool { return len(apps[2].Cluster.Held()) > 0 }, 20*time.Second, 50*time.Millisecond)

	require.NoError(t, apps[0].Stop(context.Background()))
	require.NoError(t, apps[1].Stop(context.Background()))
	require.Eventually(t, func() bool {
		resp, _ := c.req("GET", "/readyz", nil)
		return resp.StatusCode == 503
	}, 20*time.Second, 100*time.Millisecond, "readyz turns 503")
	resp, raw := c.req("GET", "/readyz", nil)
	require.Equal(t, 503, resp.StatusCode)
	require.Contains(t, string(raw), "cluster unavailable")
	var ready struct{ Error, Reason string }
	require.NoError(t, json.Unmarshal(raw, &ready))
	require.Equal(t, "not_ready", ready.Error)
	require.Equal(t, "cluster_unavailable", ready.Reason, "a not-ready answer names its reason (#31 item 2)")

	resp, raw = c.req("POST", "/sentinels", map[string]any{"subject": "github:o/r#2", "sessionId": "s1", "provider": "fake"})
	require.Equal(t, 503, resp.StatusCode, string(raw))
	require.Contains(t, string(raw), `"cluster_unavailable"`)
	require.NotEmpty(t, resp.Header.Get("Retry-After"))
	resp, _ = c.req("GET", "/sentinels/"+id, nil)
	require.Equal(t, 200, resp.StatusCode, "reads are served")
	// The list reads too, from the replica the node holds (#31 item 1:
	// they answered 500 when the bucket's consumer could not be created).
	var list struct {
		Sessions []struct{ ID string }
		Follows  []struct{ Follower string }
	}
	resp, raw = c.req("GET", "/sessions", nil)
	require.Equal(t, 200, resp.StatusCode, "GET /sessions while cut off: %s", raw)
	require.NoError(t, json.Unmarshal(raw, &list))
	require.Len(t, list.Sessions, 2, string(raw))
	require.Equal(t, "chief", list.Sessions[0].ID)
	resp, raw = c.req("GET", "/follows", nil)
	require.Equal(t, 200, resp.StatusCode, "GET /follows while cut off: %s", raw)
	require.NoError(t, json.Unmarshal(raw, &list))
	require.Len(t, list.Follows, 1, string(raw))
	require.Equal(t, "chief", list.Follows[0].Follower)
	code, out2, errOut := runCLI(t, apps[2], "session", "list")
	require.Equal(t, 0, code, "sentinel session list while cut off: %s", errOut)
	require.Contains(t, out2, "worker-1")
	require.Eventually(t, func() bool { return len(apps[2].Cluster.Held()) == 0 }, 20*time.Second, 50*time.Millisecond, "owns nothing")
}

// Starting clustered on a home a single node wrote is refused, saying how
// to move (JetStream does not move standalone streams into a cluster).
func TestClusteredStartRefusesASingleNodeStore(t *testing.T) {
	cfg := app.DefaultConfig()
	cfg.Home = t.TempDir()
	cfg.Listen = "127.0.0.1:0"
	cfg.NATS.SyncAlways = false
	a, err := app.New(cfg, testLogger(t, "solo"))
	require.NoError(t, err)
	require.NoError(t, a.Start(context.Background()), "Start provisions the standalone streams")
	require.NoError(t, a.Stop(context.Background()))

	ccfg := clusterConfigs(t, 1)[0]
	ccfg.Home = cfg.Home
	_, err = app.New(ccfg, testLogger(t, "n1"))
	require.ErrorIs(t, err, embedded.ErrSingleNodeStore)
	require.ErrorContains(t, err, "fresh home")
}
