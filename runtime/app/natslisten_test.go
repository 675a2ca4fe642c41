package app_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/runtime/app"
)

func startListeningNode(t *testing.T, edit func(*app.Config)) *app.App {
	t.Helper()
	cfg := app.DefaultConfig()
	cfg.Home = t.TempDir()
	cfg.Listen = "127.0.0.1:0"
	cfg.NATS.SyncAlways = false
	cfg.NATS.Listen = "127.0.0.1:0"
	if edit != nil {
		edit(&cfg)
	}
	a, err := app.New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	require.NoError(t, a.Start(context.Background()))
	t.Cleanup(func() { _ = a.Stop(context.Background()) })
	return a
}

// An open NATS port must not hand a stranger the credential buckets: a
// client without the listen token is refused, with a wrong one too; the
// token the node generated (0600 in the home) opens it.
func TestNATSListenerRequiresToken(t *testing.T) {
	t.Parallel()
	a := startListeningNode(t, nil)
	url := a.NATSClientURL()
	require.NotEmpty(t, url)

	_, err := nats.Connect(url, nats.MaxReconnects(0))
	require.ErrorIs(t, err, nats.ErrAuthorization, "anonymous client")
	_, err = nats.Connect(url, nats.Token("not-the-token"), nats.MaxReconnects(0))
	require.ErrorIs(t, err, nats.ErrAuthorization, "wrong token")

	path := filepath.Join(a.Cfg.Home, app.NATSTokenFile)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	nc, err := nats.Connect(url, nats.Token(strings.TrimSpace(string(raw))), nats.MaxReconnects(0))
	require.NoError(t, err)
	defer nc.Close()
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = js.KeyValue(ctx, "sentinel_creds")
	require.NoError(t, err, "the token holder reaches the store")
}

// nats.listen_token from the config is used as given; no file is written.
func TestNATSListenerConfiguredToken(t *testing.T) {
	t.Parallel()
	a := startListeningNode(t, func(c *app.Config) { c.NATS.ListenToken = "a-configured-token-of-some-length" })
	_, err := os.Stat(filepath.Join(a.Cfg.Home, app.NATSTokenFile))
	require.ErrorIs(t, err, os.ErrNotExist)
	nc, err := nats.Connect(a.NATSClientURL(), nats.Token("a-configured-token-of-some-length"), nats.MaxReconnects(0))
	require.NoError(t, err)
	nc.Close()
}

// With a certificate configured the listener refuses plain connections.
func TestNATSListenerTLS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	certFile, keyFile, pool := selfSigned(t, dir)
	a := startListeningNode(t, func(c *app.Config) {
		c.NATS.ListenToken = "a-configured-token-of-some-length"
		c.NATS.ListenTLSCert, c.NATS.ListenTLSKey = certFile, keyFile
	})
	url := strings.Replace(a.NATSClientURL(), "nats://", "tls://", 1)
	nc, err := nats.Connect(url, nats.Token("a-configured-token-of-some-length"), nats.MaxReconnects(0),
		nats.Secure(&tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}))
	require.NoError(t, err)
	nc.Close()
	plain := strings.Replace(a.NATSClientURL(), "tls://", "nats://", 1)
	_, err = nats.Connect(plain, nats.Token("a-configured-token-of-some-length"), nats.MaxReconnects(0))
	require.Error(t, err, "plain connection to a TLS listener")
}

// The NATS port follows the HTTP listener's rule: loopback unless allowed.
func TestNATSListenerRemoteNeedsAllowRemote(t *testing.T) {
	t.Parallel()
	cfg := app.DefaultConfig()
	cfg.Home = t.TempDir()
	cfg.Listen = "127.0.0.1:0"
	cfg.NATS.Listen = "0.0.0.0:0"
	_, err := app.New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.ErrorContains(t, err, "nats.listen")
	require.ErrorContains(t, err, "allow-remote")
}

// An existing home with loose permissions is made private.
func TestHomeMadePrivate(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	require.NoError(t, os.Chmod(home, 0o755))
	cfg := app.DefaultConfig()
	cfg.Home = home
	cfg.Listen = "127.0.0.1:0"
	cfg.NATS.SyncAlways = false
	a, err := app.New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	t.Cleanup(func() { _ = a.Stop(context.Background()) })
	fi, err := os.Stat(home)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
}

func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "sentinel-test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:    x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	kder, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	require.NoError(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	require.NoError(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600))
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return certFile, keyFile, pool
}
