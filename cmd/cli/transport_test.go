package cli

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/ingress/api"
	"github.com/agentproto/sentinel/internal/tlstest"
	"github.com/agentproto/sentinel/runtime/app"
)

// The review's finding: the CLI sent the token to any http:// --url. A
// plain-http URL beyond loopback is refused before any request (exit 2,
// the host named, never the token); loopback and https are not, and
// AGENTPROTO_ALLOW_INSECURE_REMOTE=true is the explicit opt-out.
func TestCLIRefusesTheTokenOverPlainHTTPBeyondLoopback(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"ok":true,"sentinels":[]}`))
	}))
	ln, err := net.Listen("tcp", ":0") // every address: a remote URL of this machine reaches it
	require.NoError(t, err)
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	// A non-loopback address of this machine, if it has one, reaches the
	// test server: the refusal must come before the request.
	remote := "http://192.0.2.10:" + port
	if ip := outboundIP(); ip != "" {
		remote = "http://" + net.JoinHostPort(ip, port)
	}

	code, _, errOut := runVerb(t, remote, "", "list")
	require.Equal(t, api.ExitUsage, code, errOut)
	require.Contains(t, errOut, "plain http")
	require.Contains(t, errOut, "https://")
	require.NotContains(t, errOut, "tok\n")
	require.Zero(t, hits.Load(), "nothing was sent")

	code, _, errOut = runVerb(t, "http://127.0.0.1:"+port, "", "list")
	require.Equal(t, 0, code, "loopback: %s", errOut)

	t.Setenv(EnvAllowInsecureRemote, "true")
	if remote != "http://192.0.2.10:"+port {
		code, _, errOut = runVerb(t, remote, "", "list")
		require.Equal(t, 0, code, "opted out: %s", errOut)
	} else {
		require.NoError(t, checkTokenTransport([]string{remote}, "tok"))
	}
}

// outboundIP is a non-loopback address of this machine, or "".
func outboundIP() string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return ""
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() {
			return n.IP.String()
		}
	}
	return ""
}

// A node serving https: the CLI reaches it through daemon.json, pinning
// the certificate the node recorded there (the URL names loopback, the
// certificate another host), and through --url with AGENTPROTO_TLS_CA; a
// certificate it does not trust fails, as does `sentinel health` against
// another node's certificate.
func TestCLIReachesAnHTTPSNode(t *testing.T) {
	ca := tlstest.NewCA(t, "node-ca")
	leaf := ca.Issue("node", "sentinel.example.com") // not a loopback name
	cfg := app.DefaultConfig()
	cfg.Home, cfg.Listen, cfg.NATS.SyncAlways = t.TempDir(), "127.0.0.1:0", false
	cfg.TLSCert, cfg.TLSKey = leaf.CertFile, leaf.KeyFile
	node, err := app.New(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	require.NoError(t, node.Start(context.Background()))
	t.Cleanup(func() { _ = node.Stop(context.Background()) })

	run := func(env map[string]string, args ...string) (int, string) {
		t.Helper()
		t.Setenv("AGENTPROTO_HOME", cfg.Home)
		for _, k := range []string{"AGENTPROTO_URL", "AGENTPROTO_TOKEN", EnvTLSCA} {
			t.Setenv(k, env[k])
		}
		var out, errOut bytes.Buffer
		code := Main(context.Background(), args, IO{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
		return code, out.String() + errOut.String()
	}
	code, out := run(nil, "list", "--json")
	require.Equal(t, 0, code, "daemon.json and its pinned certificate: %s", out)

	code, out = run(map[string]string{"AGENTPROTO_URL": node.URL(), "AGENTPROTO_TOKEN": node.Token}, "list")
	require.NotEqual(t, 0, code, "--url without a CA that signs the certificate: %s", out)

	// The certificate names sentinel.example.com: with the CA trusted, a
	// URL by that name (resolved to the node) is served.
	code, out = run(map[string]string{"AGENTPROTO_URL": node.URL(), "AGENTPROTO_TOKEN": node.Token, EnvTLSCA: ca.CertFile}, "list")
	require.NotEqual(t, 0, code, "the CA is trusted, but 127.0.0.1 is not the certificate's name: %s", out)
	tc, err := clientTLS("")
	require.NoError(t, err)
	tc.ServerName = "sentinel.example.com"
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: tc}}
	resp, err := c.Get(node.URL() + "/healthz")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	// Pinning another certificate refuses the node.
	other := tlstest.NewCA(t, "other").Issue("other")
	raw, err := os.ReadFile(filepath.Join(cfg.Home, app.DaemonFile))
	require.NoError(t, err)
	var info app.DaemonInfo
	require.NoError(t, json.Unmarshal(raw, &info))
	pinned, err := pinnedTLS(other.CertFile)
	require.NoError(t, err)
	_, err = (&http.Client{Transport: &http.Transport{TLSClientConfig: pinned}}).Get(info.URL + "/healthz")
	require.Error(t, err)
	var own *tls.Config
	own, err = pinnedTLS(info.TLSCert)
	require.NoError(t, err)
	resp, err = (&http.Client{Transport: &http.Transport{TLSClientConfig: own}}).Get(info.URL + "/healthz")
	require.NoError(t, err)
	resp.Body.Close()

	t.Setenv("AGENTPROTO_LISTEN", strings.TrimPrefix(node.URL(), "https://"))
	t.Setenv("AGENTPROTO_TLS_CERT", leaf.CertFile)
	t.Setenv("AGENTPROTO_TLS_KEY", leaf.KeyFile)
	code, out = run(nil, "health")
	require.Equal(t, 0, code, "the health probe (the container's) pins the node's own tls_cert: %s", out)
}
