package bustest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentproto/sentinel/bus"
	"github.com/agentproto/sentinel/bus/embedded"
)

// StartCluster starts n embedded servers routed to each other on loopback
// (a real JetStream cluster), opens an R-n bus on each and registers
// cleanup. Env.Stop of one member simulates losing that node.
func StartCluster(t testing.TB, n int, opts ...Option) []*Env {
	t.Helper()
	ports := make([]int, n)
	lns := make([]net.Listener, n)
	for i := range ports {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("bustest: reserve a port: %v", err)
		}
		lns[i], ports[i] = ln, ln.Addr().(*net.TCPAddr).Port
	}
	for _, ln := range lns {
		ln.Close()
	}
	routes := make([]string, n)
	for i, p := range ports {
		routes[i] = fmt.Sprintf("nats://127.0.0.1:%d", p)
	}
	// A name and a route secret of its own: a route that reaches another
	// test's server (a port freed here and taken there) is refused instead
	// of merging two clusters.
	var salt [6]byte
	_, _ = rand.Read(salt[:])
	suffix := hex.EncodeToString(salt[:])
	envs := make([]*Env, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			bc := bus.DefaultConfig()
			bc.Partitions = 4
			bc.Replicas = n
			ec := embedded.DefaultConfig()
			ec.SyncAlways = false
			ec.StoreDir = t.TempDir()
			ec.ServerName = fmt.Sprintf("n%d", i+1)
			ec.Cluster = embedded.Cluster{Name: "bustest-" + suffix, Listen: fmt.Sprintf("127.0.0.1:%d", ports[i]), Routes: routes, Token: "bustest-route-token-" + suffix}
			for _, o := range opts {
				o(&bc, &ec)
			}
			srv, err := embedded.Start(ec, nil)
			if err != nil {
				errs[i] = err
				return
			}
			env := &Env{Server: srv, Dir: ec.StoreDir}
			envs[i] = env
			nc, err := srv.Connect("bustest")
			if err != nil {
				errs[i] = err
				return
			}
			env.NC = nc
			if env.JS, err = jetstream.New(nc); err != nil {
				errs[i] = err
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			if err := bus.WaitForJetStream(ctx, nc); err != nil {
				errs[i] = err
				return
			}
			env.Bus, errs[i] = bus.Open(ctx, nc, bc)
		}()
	}
	wg.Wait()
	for _, e := range envs {
		if e != nil {
			t.Cleanup(e.Stop)
		}
	}
	for i, err := range errs {
		if err != nil {
			t.Fatalf("bustest: cluster node %d: %v", i+1, err)
		}
	}
	return envs
}
