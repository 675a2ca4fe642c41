package cli_test

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/cmd/cli"
)

// health runs `sentinel health args...` with a clean environment.
func health(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	t.Setenv("AGENTPROTO_HOME", t.TempDir())
	t.Setenv("AGENTPROTO_URL", "")
	t.Setenv("AGENTPROTO_LISTEN", "")
	for k, v := range env {
		t.Setenv(k, v)
	}
	var out, errOut bytes.Buffer
	code := cli.Main(context.Background(), append([]string{"health"}, args...), cli.IO{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	return code, out.String(), errOut.String()
}

// A real node is ready: exit 0; probed through its listen address given as
// 0.0.0.0 (as in a container), the probe goes to loopback.
func TestHealthOfARealNode(t *testing.T) {
	node := startAppNode(t)
	code, out, errOut := health(t, map[string]string{"AGENTPROTO_URL": node.URL()})
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "ready\n", out)

	_, port, err := net.SplitHostPort(strings.TrimPrefix(node.URL(), "http://"))
	require.NoError(t, err)
	code, out, errOut = health(t, map[string]string{"AGENTPROTO_LISTEN": "0.0.0.0:" + port}, "--json")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, `"ok": true`)
}

func TestHealthNotReadyIsExitOne(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		require.Equal(t, "/readyz", r.URL.Path)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte(`{"ok":false,"error":"not_ready","reason":"storage_full","message":"JetStream storage is full"}`))
	}))
	t.Cleanup(srv.Close)

	code, _, errOut := health(t, nil, "--url", srv.URL)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "not ready: storage_full: JetStream storage is full")

	code, out, _ := health(t, nil, "--url", srv.URL, "--json")
	require.Equal(t, 1, code)
	require.Contains(t, out, `"reason": "storage_full"`)

	code, _, errOut = health(t, nil, "--url", goneURL(t))
	require.Equal(t, 1, code, "an unreachable node is unhealthy, exit 1 (Docker's unhealthy)")
	require.Contains(t, errOut, "not ready: no answer from")

	code, _, errOut = health(t, map[string]string{"AGENTPROTO_LISTEN": "127.0.0.1:0"})
	require.Equal(t, 1, code, "port 0 and no daemon.json: no node to probe")
	require.Contains(t, errOut, "no node to probe")
}

// daemon.json comes before the configured (here the default) listen
// address: a node started with `serve --listen` on another port is probed
// where it listens (#31 item 4).
func TestHealthReadsDaemonJSONBeforeTheDefaultAddress(t *testing.T) {
	node := startAppNode(t) // listens on a port of its own, not 7717
	code, out, errOut := health(t, map[string]string{"AGENTPROTO_HOME": node.Cfg.Home})
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "ready\n", out)
}
