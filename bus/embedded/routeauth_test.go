package embedded_test

import (
	"crypto/tls"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/bus/bustest"
	"github.com/agentproto/sentinel/bus/embedded"
	"github.com/agentproto/sentinel/internal/freeport"
	"github.com/agentproto/sentinel/internal/tlstest"
)

// routeUser is the route user every node presents (embedded's own).
const routeUser = "sentinel-route"

func freePort(t *testing.T) int {
	t.Helper()
	ports, err := freeport.Take(1)
	require.NoError(t, err)
	return ports[0]
}

// startRouted starts one clustered server (routes naming only itself)
// with the given route token.
func startRouted(t *testing.T, token string) (*embedded.Server, string) {
	t.Helper()
	port := freePort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	cfg := embedded.DefaultConfig()
	cfg.StoreDir, cfg.SyncAlways = t.TempDir(), false
	cfg.Cluster = embedded.Cluster{Name: "authtest", Listen: addr, Routes: []string{"nats://" + addr}, Token: token}
	srv, err := embedded.Start(cfg, nil)
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	return srv, addr
}

// The review's attack: a raw client connecting to a route port as a
// route, without credentials, was taken (PONG) on a loopback listener
// without cluster.token, and could then read every record and have a node
// run commands. A route listener always requires the route credentials
// now, loopback included: no credentials and wrong ones are refused, the
// derived ones are taken.
func TestRouteListenerRefusesRoutesWithoutTheSecret(t *testing.T) {
	token := strings.Repeat("r", 40)
	_, addr := startRouted(t, token)
	require.Contains(t, bustest.RouteHandshake(t, addr, "authtest", "", ""), "Authorization Violation", "no credentials")
	require.Contains(t, bustest.RouteHandshake(t, addr, "authtest", routeUser, embedded.RoutePassword(strings.Repeat("x", 40))), "Authorization Violation", "another token's password")
	require.Equal(t, "PONG", bustest.RouteHandshake(t, addr, "authtest", routeUser, embedded.RoutePassword(token)), "the derived credentials")
}

// A cluster is never started without a route secret, or with one shorter
// than MinRouteTokenLen: named errors that never quote it.
func TestClusterNeedsALongRouteSecret(t *testing.T) {
	for _, tc := range []struct {
		name, token string
		want        error
	}{
		{"none", "", embedded.ErrRouteTokenRequired},
		{"short", "short-secret-123", embedded.ErrRouteTokenTooShort},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := embedded.DefaultConfig()
			cfg.StoreDir = t.TempDir()
			addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
			cfg.Cluster = embedded.Cluster{Name: "authtest", Listen: addr, Routes: []string{"nats://" + addr}, Token: tc.token}
			srv, err := embedded.Start(cfg, nil)
			if srv != nil {
				srv.Shutdown()
			}
			require.True(t, errors.Is(err, tc.want), "%v", err)
			if tc.token != "" {
				require.NotContains(t, err.Error(), tc.token)
			}
		})
	}
}

// startRoutedTLS starts one clustered server with route TLS.
func startRoutedTLS(t *testing.T, token string, leaf tlstest.Leaf, caFile string) string {
	t.Helper()
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	cfg := embedded.DefaultConfig()
	cfg.StoreDir, cfg.SyncAlways = t.TempDir(), false
	cfg.Cluster = embedded.Cluster{Name: "tlstest", Listen: addr, Routes: []string{"nats://" + addr}, Token: token,
		TLSCert: leaf.CertFile, TLSKey: leaf.KeyFile, TLSCA: caFile}
	srv, err := embedded.Start(cfg, nil)
	require.NoError(t, err)
	t.Cleanup(srv.Shutdown)
	return addr
}

// With route TLS, a route must speak TLS and present a certificate of the
// cluster's CA before it may even send its credentials: a plain-text
// route, one without a certificate and one with another CA's are refused
// in the handshake; the node's own CA's certificate with the credentials
// is taken. The client side checks the server's certificate against the
// CA too.
func TestRouteTLSIsVerifiedBothWays(t *testing.T) {
	token := strings.Repeat("t", 40)
	ca, other := tlstest.NewCA(t, "cluster-ca"), tlstest.NewCA(t, "rogue-ca")
	addr := startRoutedTLS(t, token, ca.Issue("n1"), ca.CertFile)
	pass := embedded.RoutePassword(token)

	require.NotEqual(t, "PONG", bustest.RouteHandshake(t, addr, "tlstest", routeUser, pass), "plain text")
	ownCert := func(l tlstest.Leaf) []tls.Certificate {
		c, err := tls.LoadX509KeyPair(l.CertFile, l.KeyFile)
		require.NoError(t, err)
		return []tls.Certificate{c}
	}
	noCert := &tls.Config{RootCAs: ca.Pool(), ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}
	require.NotEqual(t, "PONG", bustest.RouteHandshakeTLS(t, addr, "tlstest", routeUser, pass, noCert), "no client certificate")
	rogue := &tls.Config{RootCAs: ca.Pool(), ServerName: "127.0.0.1", Certificates: ownCert(other.Issue("intruder")), MinVersion: tls.VersionTLS12}
	require.NotEqual(t, "PONG", bustest.RouteHandshakeTLS(t, addr, "tlstest", routeUser, pass, rogue), "another CA's certificate")
	good := &tls.Config{RootCAs: ca.Pool(), ServerName: "127.0.0.1", Certificates: ownCert(ca.Issue("n2")), MinVersion: tls.VersionTLS12}
	require.Contains(t, bustest.RouteHandshakeTLS(t, addr, "tlstest", routeUser, "guess", good), "Authorization Violation", "TLS does not replace the credentials")
	require.Equal(t, "PONG", bustest.RouteHandshakeTLS(t, addr, "tlstest", routeUser, pass, good))

	// The other way: a client that trusts only another CA refuses the
	// node's certificate.
	distrust := &tls.Config{RootCAs: other.Pool(), ServerName: "127.0.0.1", Certificates: ownCert(ca.Issue("n3")), MinVersion: tls.VersionTLS12}
	require.Contains(t, bustest.RouteHandshakeTLS(t, addr, "tlstest", routeUser, pass, distrust), "tls:")
}

// Route TLS needs the certificate, the key and the CA together.
func TestRouteTLSNeedsAllThreeFiles(t *testing.T) {
	ca := tlstest.NewCA(t, "cluster-ca")
	leaf := ca.Issue("n1")
	cfg := embedded.DefaultConfig()
	cfg.StoreDir = t.TempDir()
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	cfg.Cluster = embedded.Cluster{Name: "tlstest", Listen: addr, Routes: []string{"nats://" + addr}, Token: strings.Repeat("t", 40),
		TLSCert: leaf.CertFile, TLSKey: leaf.KeyFile}
	_, err := embedded.Start(cfg, nil)
	require.ErrorContains(t, err, "cluster.tls_ca")
}
