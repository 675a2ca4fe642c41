package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/runtime/app"
)

// probe GETs url (with the bearer token when token is set) and returns
// the status, the Retry-After header and the decoded JSON body.
func probe(t *testing.T, url, token string) (int, string, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var body map[string]any
	require.NoError(t, json.Unmarshal(raw, &body), string(raw))
	return resp.StatusCode, resp.Header.Get("Retry-After"), body
}

// A node of a three-node cluster started alone is live at once (its
// listener serves /healthz 200 as New returns, before any peer exists),
// answers /readyz 503 waiting_for_peers with the routes it has, answers
// every API call 503 not_ready with that reason, keeps waiting past
// cluster.wait (it warns, it does not give up), and becomes ready when
// its peers arrive later: the wait is as long as the peers take.
func TestClusterNodeAloneIsLiveAndWaitsForItsPeers(t *testing.T) {
	cfgs := clusterConfigs(t, 3)
	cfgs[0].Cluster.Wait = 300 * time.Millisecond
	logs := &syncBuffer{}
	n1, err := app.New(cfgs[0], slog.New(slog.NewTextHandler(logs, nil)))
	require.NoError(t, err)
	t.Cleanup(func() { _ = n1.Stop(context.Background()) })

	status, _, body := probe(t, n1.URL()+"/healthz", "")
	require.Equal(t, http.StatusOK, status, "live before any peer: %v", body)
	status, _, body = probe(t, n1.URL()+"/readyz", "")
	require.Equal(t, http.StatusServiceUnavailable, status)
	require.Equal(t, "not_ready", body["error"])
	require.Equal(t, "waiting_for_peers", body["reason"], body)
	require.Equal(t, float64(0), body["routes"], "no peer runs: no route up")
	require.Contains(t, body, "waitingMs")
	status, retry, body := probe(t, n1.URL()+"/sentinels", n1.Token)
	require.Equal(t, http.StatusServiceUnavailable, status)
	require.Equal(t, "1", retry)
	require.Equal(t, "not_ready", body["error"])
	require.Equal(t, "waiting_for_peers", body["reason"], body)

	started := make(chan error, 1)
	go func() { started <- n1.Start(context.Background()) }()
	// Hold the peers back until n1 has waited past cluster.wait twice.
	waitFor(t, 30*time.Second, "two cluster.wait warnings", func() string {
		if n := strings.Count(logs.String(), "still waiting for JetStream after cluster.wait"); n < 2 {
			return fmt.Sprintf("%d warnings logged", n)
		}
		return ""
	})
	status, _, _ = probe(t, n1.URL()+"/healthz", "")
	require.Equal(t, http.StatusOK, status, "still live after cluster.wait")
	status, _, body = probe(t, n1.URL()+"/readyz", "")
	require.Equal(t, http.StatusServiceUnavailable, status)
	require.Equal(t, "waiting_for_peers", body["reason"], body)

	peers := make([]*app.App, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range peers {
		wg.Go(func() {
			cfg := cfgs[i+1]
			if peers[i], errs[i] = app.New(cfg, testLogger(t, cfg.Node.Name)); errs[i] == nil {
				errs[i] = peers[i].Start(context.Background())
			}
		})
	}
	wg.Wait()
	for i, p := range peers {
		if p != nil {
			t.Cleanup(func() { _ = p.Stop(context.Background()) })
		}
		require.NoError(t, errs[i], "node %d", i+2)
	}
	require.NoError(t, <-started)
	status, _, body = probe(t, n1.URL()+"/readyz", "")
	require.Equal(t, http.StatusOK, status, "%v", body)
	status, _, body = probe(t, n1.URL()+"/sentinels", n1.Token)
	require.Equal(t, http.StatusOK, status, "%v", body)
}

// A single node answers /healthz 200 between New and Start, /readyz 503
// starting and its API 503 not_ready (starting), then opens.
func TestNodeServesProbesBeforeStart(t *testing.T) {
	t.Parallel()
	cfg := app.DefaultConfig()
	cfg.Home = t.TempDir()
	cfg.Listen = "127.0.0.1:0"
	cfg.NATS.SyncAlways = false
	a, err := app.New(cfg, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	t.Cleanup(func() { _ = a.Stop(context.Background()) })

	status, _, _ := probe(t, a.URL()+"/healthz", "")
	require.Equal(t, http.StatusOK, status)
	status, _, body := probe(t, a.URL()+"/readyz", "")
	require.Equal(t, http.StatusServiceUnavailable, status)
	require.Equal(t, "starting", body["reason"], body)
	require.NotContains(t, body, "routes", "a single node has no peers to wait for")
	status, retry, body := probe(t, a.URL()+"/sessions", a.Token)
	require.Equal(t, http.StatusServiceUnavailable, status)
	require.Equal(t, "1", retry)
	require.Equal(t, "not_ready", body["error"])
	require.Equal(t, "starting", body["reason"])

	require.NoError(t, a.Start(context.Background()))
	status, _, _ = probe(t, a.URL()+"/readyz", "")
	require.Equal(t, http.StatusOK, status)
	status, _, body = probe(t, a.URL()+"/sessions", a.Token)
	require.Equal(t, http.StatusOK, status, "%v", body)
}

// A node stopped (its Run's ctx cancelled) while it waits for its peers
// stops cleanly: Run returns nil and the listener is closed.
func TestRunStoppedWhileWaitingForPeersIsClean(t *testing.T) {
	cfg := clusterConfigs(t, 3)[0]
	a, err := app.New(cfg, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	url := a.URL()
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- a.Run(ctx) }()
	waitFor(t, 30*time.Second, "waiting for peers", func() string {
		if status, _, body := probe(t, url+"/readyz", ""); body["reason"] != "waiting_for_peers" {
			return http.StatusText(status)
		}
		return ""
	})
	cancel()
	require.NoError(t, <-ran, "stopping a waiting node is no failure")
	_, err = http.Get(url + "/healthz")
	require.Error(t, err, "the listener is closed once stopped")
}
