package embedded

import (
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/agentproto/sentinel/internal/freeport"
	"github.com/stretchr/testify/require"
)

// silentProxy forwards TCP connections to target until Freeze, after which
// it keeps every connection open and moves no byte in either direction: a
// partition that drops packets, not one that refuses them.
type silentProxy struct {
	ln     net.Listener
	target string

	frozen, done chan struct{}

	mu    sync.Mutex
	conns []net.Conn
}

func newSilentProxy(t *testing.T, target string) *silentProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &silentProxy{ln: ln, target: target, frozen: make(chan struct{}), done: make(chan struct{})}
	t.Cleanup(func() {
		close(p.done)
		_ = ln.Close()
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, c := range p.conns {
			_ = c.Close()
		}
	})
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				_ = in.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, in, out)
			p.mu.Unlock()
			go p.pipe(out, in)
			go p.pipe(in, out)
		}
	}()
	return p
}

// pipe copies src to dst in small chunks, checking for the freeze before
// each write.
func (p *silentProxy) pipe(dst, src net.Conn) {
	buf := make([]byte, 4096)
	for {
		n, err := src.Read(buf)
		select {
		case <-p.frozen:
			<-p.done // hold the connection, move nothing, until cleanup
			return
		default:
		}
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if err != io.EOF {
				_ = dst.Close()
			}
			return
		}
	}
}

func (p *silentProxy) Freeze() { close(p.frozen) }

func freePort(t *testing.T) int {
	t.Helper()
	ports, err := freeport.Take(1)
	require.NoError(t, err)
	return ports[0]
}

// A route to a peer that goes silent (its packets dropped, the TCP
// connection never refused or reset) is closed within seconds, so the
// server stops sending it requests it never answers; nats-server's own
// route pings would keep it a minute or more.
func TestSilentRouteIsClosedWithinSeconds(t *testing.T) {
	pa, pb := freePort(t), freePort(t)
	proxy := newSilentProxy(t, fmt.Sprintf("127.0.0.1:%d", pb))
	// A clustered server is ready only once it has its peers: start both
	// at once.
	srvs := make([]*Server, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, n := range []struct {
		port   int
		routes []string
	}{{pa, []string{fmt.Sprintf("nats://%s", proxy.ln.Addr())}}, {pb, []string{fmt.Sprintf("nats://127.0.0.1:%d", pb)}}} {
		wg.Go(func() {
			cfg := DefaultConfig()
			cfg.StoreDir, cfg.SyncAlways, cfg.ServerName = t.TempDir(), false, fmt.Sprintf("s%d", i)
			cfg.Cluster = Cluster{Name: "silent", Listen: fmt.Sprintf("127.0.0.1:%d", n.port), Routes: n.routes, Token: "silent-route-token-for-this-test-only"}
			srvs[i], errs[i] = Start(cfg, nil)
		})
	}
	wg.Wait()
	for i, err := range errs {
		require.NoError(t, err)
		t.Cleanup(srvs[i].Shutdown)
	}
	a, b := srvs[0], srvs[1]
	require.Eventually(t, func() bool { return a.ns.NumRoutes() > 0 && b.ns.NumRoutes() > 0 }, 20*time.Second, 20*time.Millisecond,
		"a routes to b through the proxy")

	proxy.Freeze()
	frozen := time.Now()
	require.Eventually(t, func() bool { return a.ns.NumRoutes() == 0 }, 4*RoutePingInterval*RouteMaxPingsOut, 20*time.Millisecond,
		"a closes its silent route")
	t.Logf("the silent route closed %s after the freeze", time.Since(frozen).Round(100*time.Millisecond))
}
