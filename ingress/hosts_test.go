package ingress_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/ingress"
)

func TestForeignHostsAreRefusedBeforeAuth(t *testing.T) {
	hosts, err := ingress.NewHostPolicy([]string{"Sentinel.LAN", " box:7717 "}, "https://pub.example")
	require.NoError(t, err)
	n := startNode(t, ingress.Config{Hosts: hosts})
	_, port, _ := net.SplitHostPort(n.addr)
	bearer := []string{"Authorization", "Bearer " + token}
	cases := []struct {
		name, host string
		ok         bool
	}{
		{"loopback address", "127.0.0.1:" + port, true},
		{"localhost", "localhost:" + port, true},
		{"localhost in capitals", "LOCALHOST", true},
		{"ipv6 loopback", "[::1]:" + port, true},
		{"allowed host, any port", "sentinel.lan:9999", true},
		{"allowed host:port", "box:7717", true},
		{"allowed host on another port", "box:7718", false},
		{"public URL host", "pub.example", true},
		{"rebinding name", "evil.example", false},
		{"rebinding name with the node's port", "evil.example:" + port, false},
		{"a suffix of a loopback name", "localhost.evil.example", false},
		{"a suffix of the public host", "pub.example.evil.example", false},
		{"an IP literal over loopback", "10.0.0.5:" + port, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := n.do(t, "GET", "/reqid", "", append([]string{"Host", tc.host}, bearer...)...)
			if tc.ok {
				require.Equal(t, http.StatusNoContent, a.status, a.raw)
				<-n.reqIDs
				return
			}
			require.Equal(t, http.StatusForbidden, a.status, a.raw)
			require.Equal(t, "forbidden_host", a.body["error"])
			require.NotEmpty(t, a.body["message"])
		})
	}

	// The Host check runs before the bearer check and on push ingress.
	a := n.do(t, "GET", "/reqid", "", "Host", "evil.example")
	require.Equal(t, http.StatusForbidden, a.status, "a rebinding page learns nothing, not even that a token is wanted")
	a = n.do(t, "POST", "/public", "{}", "Host", "evil.example")
	require.Equal(t, "forbidden_host", a.body["error"], a.raw)
	a = n.do(t, "POST", "/public", "{}", "Host", "pub.example")
	require.Equal(t, http.StatusOK, a.status, "push senders post with the public URL's Host: %s", a.raw)

	// Probes answer whatever the Host.
	for _, p := range []string{"/healthz", "/readyz"} {
		require.Equal(t, http.StatusOK, n.do(t, "GET", p, "", "Host", "evil.example").status, p)
	}
}

func TestHostPolicyOffLoopback(t *testing.T) {
	p, err := ingress.NewHostPolicy(nil, "")
	require.NoError(t, err)
	over := func(local string, host string) bool {
		r := httptest.NewRequest("GET", "/", nil)
		r.Host = host
		r = r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, &net.TCPAddr{IP: net.ParseIP(local), Port: 7717}))
		return p.Allows(r)
	}
	require.True(t, over("192.168.1.5", "192.168.1.5:7717"), "a LAN client of an --allow-remote node uses the IP")
	require.True(t, over("192.168.1.5", "[fd00::5]:7717"))
	require.False(t, over("192.168.1.5", "evil.example:7717"), "a name must be allowed")
	require.False(t, over("127.0.0.1", "192.168.1.5:7717"), "over loopback only loopback names pass")
	require.True(t, over("192.168.1.5", "localhost:7717"))
	require.False(t, over("192.168.1.5", ""), "an empty Host (HTTP/1.0) is refused")

	for _, bad := range []string{"https://x.example", "x.example/path", "*.example", "a b"} {
		_, err := ingress.NewHostPolicy([]string{bad}, "")
		require.Error(t, err, bad)
		require.True(t, strings.Contains(err.Error(), "allowed_hosts"), err.Error())
	}
}

func TestCrossOriginWritesAreRefused(t *testing.T) {
	n := startNode(t, ingress.Config{})
	bearer := []string{"Authorization", "Bearer " + token}
	cases := []struct {
		name, method, path string
		hdr                []string
		status             int
	}{
		{"no origin (curl, CLI)", "POST", "/echo", nil, http.StatusOK},
		{"same origin", "POST", "/echo", []string{"Origin", n.url}, http.StatusOK},
		{"sec-fetch-site same-origin", "POST", "/echo", []string{"Sec-Fetch-Site", "same-origin"}, http.StatusOK},
		{"foreign origin", "POST", "/echo", []string{"Origin", "http://evil.example"}, http.StatusForbidden},
		{"opaque origin", "POST", "/echo", []string{"Origin", "null"}, http.StatusForbidden},
		{"another local page", "POST", "/echo", []string{"Origin", "http://localhost:3000", "Sec-Fetch-Site", "same-site"}, http.StatusForbidden},
		{"cross-site fetch", "POST", "/echo", []string{"Sec-Fetch-Site", "cross-site"}, http.StatusForbidden},
		{"a page posting to push ingress", "POST", "/public", []string{"Origin", "http://localhost:3000", "Content-Type", "text/plain"}, http.StatusForbidden},
		{"foreign origin on a read", "GET", "/reqid", []string{"Origin", "http://evil.example"}, http.StatusNoContent},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := n.do(t, tc.method, tc.path, `{"a":1}`, append(tc.hdr, bearer...)...)
			require.Equal(t, tc.status, a.status, a.raw)
			switch tc.status {
			case http.StatusForbidden:
				require.Equal(t, "forbidden_origin", a.body["error"])
			case http.StatusNoContent:
				<-n.reqIDs
			}
		})
	}

	// curl -d sends a form content type: with a bearer header (which a page
	// cannot add without a preflight the node never grants) it is accepted.
	a := n.do(t, "POST", "/echo", `{"a":1}`, append([]string{"Content-Type", "application/x-www-form-urlencoded"}, bearer...)...)
	require.Equal(t, http.StatusOK, a.status, a.raw)
	require.JSONEq(t, `{"a":1}`, a.raw)
}
