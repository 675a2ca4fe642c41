package app_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/bus/bustest"
	"github.com/agentproto/sentinel/bus/embedded"
	"github.com/agentproto/sentinel/internal/tlstest"
	"github.com/agentproto/sentinel/runtime/app"
)

// Three nodes whose routes are TLS, verified both ways with certificates
// of one CA (made by the test): they form one cluster and serve every
// route, and their route listeners refuse a route in clear and one whose
// certificate another CA signed, whatever credentials it sends.
func TestThreeNodeClusterWithTLSRoutes(t *testing.T) {
	ca, rogue := tlstest.NewCA(t, "sentinel-routes"), tlstest.NewCA(t, "rogue")
	cfgs := clusterConfigs(t, 3)
	for i := range cfgs {
		leaf := ca.Issue(fmt.Sprintf("n%d", i+1))
		cfgs[i].Cluster.TLSCert, cfgs[i].Cluster.TLSKey, cfgs[i].Cluster.TLSCA = leaf.CertFile, leaf.KeyFile, ca.CertFile
	}
	apps := startCluster(t, cfgs)
	a, c := &node{t: t, app: apps[0]}, &node{t: t, app: apps[2]}
	out := a.expect(201, "POST", "/sentinels", map[string]any{"subject": "github:o/r#1", "sessionId": "s1", "provider": "fake"})
	id := out["sentinel"].(map[string]any)["id"].(string)
	bustest.Eventually(t, 10*time.Second, func() bool {
		resp, _ := c.req("GET", "/sentinels/"+id, nil)
		return resp.StatusCode == 200
	}, "created on n1, seen on n3 over TLS routes")
	view := a.expect(200, "GET", "/cluster", nil)["cluster"].(map[string]any)
	require.Len(t, view["routes"], 2, "n1 routes to both others")

	listen, name := cfgs[1].Cluster.Listen, cfgs[1].Cluster.Name
	pass := embedded.RoutePassword(cfgs[1].Cluster.Token)
	require.NotEqual(t, "PONG", bustest.RouteHandshake(t, listen, name, "sentinel-route", pass), "a route in clear, with the right credentials")
	intruder := rogue.Issue("intruder")
	cert, err := tls.LoadX509KeyPair(intruder.CertFile, intruder.KeyFile)
	require.NoError(t, err)
	tc := &tls.Config{RootCAs: ca.Pool(), ServerName: "127.0.0.1", Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	require.NotEqual(t, "PONG", bustest.RouteHandshakeTLS(t, listen, name, "sentinel-route", pass, tc), "another CA's certificate")
}

// tls_cert and tls_key make the API listener serve https: the URL and
// daemon.json say so (with the certificate a local client pins), a client
// that trusts the CA is served, and a request in clear is refused by the
// TLS listener before any handler (the bearer token never crosses in
// clear to the node).
func TestAPIListenerServesTLS(t *testing.T) {
	t.Parallel()
	ca := tlstest.NewCA(t, "sentinel-api")
	leaf := ca.Issue("api")
	n := startNodeWith(t, func(c *app.Config) { c.TLSCert, c.TLSKey = leaf.CertFile, leaf.KeyFile })
	require.True(t, strings.HasPrefix(n.app.URL(), "https://127.0.0.1:"), n.app.URL())

	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool(), MinVersion: tls.VersionTLS12}}, Timeout: 30 * time.Second}
	req, _ := http.NewRequest(http.MethodGet, n.app.URL()+"/adapters", nil)
	req.Header.Set("Authorization", "Bearer "+n.app.Token)
	resp, err := client.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.NotNil(t, resp.TLS)

	plain := strings.Replace(n.app.URL(), "https://", "http://", 1)
	req, _ = http.NewRequest(http.MethodGet, plain+"/adapters", nil)
	req.Header.Set("Authorization", "Bearer "+n.app.Token)
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusBadRequest, resp.StatusCode, "the TLS listener refuses plain HTTP: %s", body)
	require.NotContains(t, string(body), `"adapters"`)

	raw, err := os.ReadFile(filepath.Join(n.app.Cfg.Home, app.DaemonFile))
	require.NoError(t, err)
	var info app.DaemonInfo
	require.NoError(t, json.Unmarshal(raw, &info))
	require.Equal(t, n.app.URL(), info.URL)
	require.Equal(t, leaf.CertFile, info.TLSCert)
}

// A listener beyond loopback without TLS is refused at start, each of
// the API, route and NATS client listeners, with a named error saying
// what it would carry in clear and which keys fix it; allow_insecure_remote
// lets it start, with a warning in the log.
func TestRemoteListenersNeedTLSOrAnExplicitOptOut(t *testing.T) {
	t.Parallel()
	ca := tlstest.NewCA(t, "sentinel")
	leaf := ca.Issue("node")
	base := func() app.Config {
		cfg := app.DefaultConfig()
		cfg.Home = t.TempDir()
		cfg.Listen = "127.0.0.1:0"
		cfg.AllowRemote = true
		return cfg
	}
	cases := []struct {
		name string
		edit func(*app.Config)
		key  string
		fix  func(*app.Config)
	}{
		{"api", func(c *app.Config) { c.Listen = "0.0.0.0:0" }, "listen", func(c *app.Config) { c.TLSCert, c.TLSKey = leaf.CertFile, leaf.KeyFile }},
		{"routes", func(c *app.Config) { c.Cluster.Listen = "0.0.0.0:6222"; c.Cluster.Token = strings.Repeat("r", 40) }, "cluster.listen",
			func(c *app.Config) {
				c.Cluster.TLSCert, c.Cluster.TLSKey, c.Cluster.TLSCA = leaf.CertFile, leaf.KeyFile, ca.CertFile
			}},
		{"nats", func(c *app.Config) { c.NATS.Listen = "0.0.0.0:4222" }, "nats.listen",
			func(c *app.Config) { c.NATS.ListenTLSCert, c.NATS.ListenTLSKey = leaf.CertFile, leaf.KeyFile }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := base()
			tc.edit(&cfg)
			err := cfg.Validate()
			require.True(t, errors.Is(err, app.ErrInsecureRemote), "%v", err)
			require.Contains(t, err.Error(), tc.key)
			require.Contains(t, err.Error(), "allow_insecure_remote")

			fixed := base()
			tc.edit(&fixed)
			tc.fix(&fixed)
			require.NoError(t, fixed.Validate())

			optOut := base()
			tc.edit(&optOut)
			optOut.AllowInsecureRemote = true
			require.NoError(t, optOut.Validate())
		})
	}

	// Opted out, the node starts and says what runs in clear.
	logs := &syncBuffer{}
	cfg := base()
	cfg.Listen, cfg.AllowInsecureRemote = "0.0.0.0:0", true
	cfg.NATS.SyncAlways, cfg.Testing.FakeProvider = false, true
	a, err := app.New(cfg, slog.New(slog.NewTextHandler(logs, nil)))
	require.NoError(t, err)
	require.NoError(t, a.Start(context.Background()))
	t.Cleanup(func() { _ = a.Stop(context.Background()) })
	require.Contains(t, logs.String(), "level=WARN")
	require.Contains(t, logs.String(), "allow_insecure_remote")
	require.Contains(t, logs.String(), "key=listen")
}
