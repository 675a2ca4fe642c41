package embedded_test

import (
	"io"
	"log/slog"
	"net"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/bus/embedded"
)

// A client listener on port 0 takes any free port, as every other listener
// of the node does: two servers asking for 127.0.0.1:0 at once both start,
// on two ports, neither on nats-server's default 4222 (which port 0 meant
// to nats-server, so the second of two such nodes never became ready).
func TestListenerPortZeroTakesAFreePort(t *testing.T) {
	ports := map[string]bool{}
	for range 2 {
		cfg := embedded.DefaultConfig()
		cfg.StoreDir, cfg.SyncAlways = t.TempDir(), false
		cfg.Listen, cfg.ListenToken = "127.0.0.1:0", "listen-secret"
		srv, err := embedded.Start(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
		require.NoError(t, err)
		t.Cleanup(srv.Shutdown)
		u, err := url.Parse(srv.ClientURL())
		require.NoError(t, err)
		require.NotEqual(t, "4222", u.Port())
		require.NotEqual(t, "0", u.Port())
		ports[u.Port()] = true
		nc, err := nats.Connect(srv.ClientURL(), nats.Token("listen-secret"), nats.MaxReconnects(0))
		require.NoError(t, err)
		nc.Close()
	}
	require.Len(t, ports, 2)
}

// A server whose route (or client) port is taken fails its start at once,
// naming the listener, instead of waiting out the ready timeout: a node of
// a cluster whose cluster.listen another process holds says so in
// seconds, and a test that lost the port learns it at once.
func TestTakenPortFailsTheStartAtOnce(t *testing.T) {
	held, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { held.Close() })
	for name, set := range map[string]func(*embedded.Config){
		"route": func(c *embedded.Config) {
			c.Cluster = embedded.Cluster{Name: "taken", Listen: held.Addr().String(), Token: strings.Repeat("r", 32),
				Routes: []string{"nats://" + held.Addr().String()}}
		},
		"client": func(c *embedded.Config) { c.Listen, c.ListenToken = held.Addr().String(), "listen-secret" },
	} {
		t.Run(name, func(t *testing.T) {
			cfg := embedded.DefaultConfig()
			cfg.StoreDir, cfg.SyncAlways = t.TempDir(), false
			cfg.ReadyTimeout = time.Hour // a start that waited it out would hang the test
			set(&cfg)
			srv, err := embedded.Start(cfg, nil)
			if srv != nil {
				srv.Shutdown()
			}
			require.ErrorIs(t, err, embedded.ErrNotStarted)
			require.Contains(t, err.Error(), strconv.Itoa(held.Addr().(*net.TCPAddr).Port))
		})
	}
}
