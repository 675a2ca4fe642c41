package subscriptions

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Every IPv6 spelling of a loopback, link-local, private or otherwise
// special address is refused, not only the plain and IPv4-mapped ones.
func TestPublicAddrRefusesEverySpecialForm(t *testing.T) {
	cases := []struct {
		name   string
		addr   string
		public bool
	}{
		{"ipv4 loopback", "127.0.0.1", false},
		{"ipv4-mapped loopback", "::ffff:127.0.0.1", false},
		{"ipv4-compatible loopback", "::127.0.0.1", false},
		{"ipv4-compatible metadata", "::169.254.169.254", false},
		{"ipv4-translated loopback", "::ffff:0:127.0.0.1", false},
		{"6to4 of loopback", "2002:7f00:1::", false},
		{"6to4 of a private address", "2002:a00:1::1", false},
		{"local-use NAT64 of metadata", "64:ff9b:1::a9fe:a9fe", false},
		{"well-known NAT64 of loopback", "64:ff9b::7f00:1", false},
		{"site-local", "fec0::1", false},
		{"unique local", "fd00::1", false},
		{"link-local", "fe80::1", false},
		{"ipv6 loopback", "::1", false},
		{"unspecified", "::", false},
		{"teredo", "2001:0:4136:e378:8000:63bf:3fff:fdd2", false},
		{"ipv6 documentation", "2001:db8::1", false},
		{"ipv6 documentation (3fff::/20)", "3fff::1", false},
		{"discard-only", "100::1", false},
		{"multicast", "ff02::1", false},
		{"cgnat", "100.64.0.1", false},
		{"metadata", "169.254.169.254", false},
		{"private", "10.0.0.1", false},
		{"6to4 relay anycast", "192.88.99.1", false},
		{"public ipv4", "1.1.1.1", true},
		{"public ipv6", "2606:4700:4700::1111", true},
		{"ipv4-mapped public", "::ffff:1.1.1.1", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.public, publicAddr(netip.MustParseAddr(tc.addr)), tc.addr)
		})
	}
}

// The hardened client refuses to dial a callback whose host is an
// IPv4-compatible spelling of loopback: the check happens on the resolved
// address, before any connection, and nothing reaches the listener.
func TestCallbackClientRefusesIPv4CompatibleLoopback(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var hits atomic.Int32
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hits.Add(1) }), ReadHeaderTimeout: time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	port := ln.Addr().(*net.TCPAddr).Port
	client := newCallbackClient(2*time.Second, false)
	for _, host := range []string{"[::127.0.0.1]", "[::ffff:0:127.0.0.1]", "[2002:7f00:1::]", "[fec0::1]"} {
		req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, "http://"+host+":"+strconv.Itoa(port)+"/hook", nil)
		require.NoError(t, err)
		resp, err := client.Do(req)
		if resp != nil {
			resp.Body.Close()
		}
		require.Error(t, err, host)
		require.True(t, errors.Is(err, errBlocked), "%s: refused by the filter, not by the network: %v", host, err)
	}
	require.Zero(t, hits.Load())
}
