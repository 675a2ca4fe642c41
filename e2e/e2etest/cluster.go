package e2etest

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentproto/sentinel/internal/freeport"
)

// ClusterOptions configures StartCluster; zero values take the defaults.
type ClusterOptions struct {
	// Nodes is the number of nodes (default 3).
	Nodes int
	// Env is added to every node's environment.
	Env []string
	// NodeEnv, when set, returns extra environment for node i (0-based),
	// added after Env.
	NodeEnv func(i int) []string
	// NATSURL and NATSToken select external mode: the nodes share that
	// NATS deployment (AGENTPROTO_NATS_URL, AGENTPROTO_NATS_CLIENT_TOKEN)
	// and embed no server, so no cluster.* key is set.
	NATSURL, NATSToken string
	// Host, when set, is the address node i's API listens on; RouteHost
	// the address of its route listener (default: Host). Both default to
	// 127.0.0.1; a non-loopback one sets AGENTPROTO_ALLOW_REMOTE and
	// AGENTPROTO_ALLOW_INSECURE_REMOTE (the test's network namespaces are
	// on this machine: no TLS).
	Host, RouteHost func(i int) string
	// Wrap, when set, is the argv prefix node i's command runs under (for
	// example `ip netns exec <ns>`).
	Wrap func(i int) []string
	// Ready bounds each node's start (default 90 s: a loaded machine).
	Ready time.Duration
}

// Cluster is several `sentinel serve` processes of one service: one API
// token, each node its own home and fixed ports, so a restarted node comes
// back on the same addresses.
type Cluster struct {
	// Token is the service's API token (AGENTPROTO_TOKEN on every node).
	Token string
	// Nodes are the running processes, by index; Restart replaces one.
	Nodes []*Node

	bin   string
	ready time.Duration
	mu    sync.Mutex
	specs []nodeSpec
	// past are the processes Restart replaced, for Logs.
	past [][]*Node
}

type nodeSpec struct {
	name, home, listen string
	wrap, env          []string
}

// LogDirEnv names a folder: when set, every cluster test writes all its
// nodes' logs to <folder>/<test name>.log at cleanup.
const LogDirEnv = "SENTINEL_E2E_LOGS"

// FailureLogBytes is how much of the nodes' logs (the end) a failed test
// prints.
const FailureLogBytes = 400 << 10

// StartCluster starts opts.Nodes `sentinel serve` processes of one service
// on free ports, concurrently (an embedded cluster needs a majority up
// before any node is ready), and waits until every node answers /readyz.
// Embedded nodes route to each other with one route token; external ones
// share the given NATS deployment. Every node is SIGKILLed at cleanup.
func StartCluster(t testing.TB, bin string, opts ClusterOptions) *Cluster {
	t.Helper()
	c := PrepareCluster(t, bin, opts)
	began := time.Now()
	for i := range c.specs {
		c.Launch(t, i)
	}
	c.WaitReady(t)
	t.Logf("%d nodes ready in %s", len(c.Nodes), time.Since(began).Round(100*time.Millisecond))
	return c
}

// PrepareCluster is StartCluster without starting anything: every node's
// home, ports and environment are set, and Launch starts node i when the
// test wants it (a node started alone waits for its peers).
func PrepareCluster(t testing.TB, bin string, opts ClusterOptions) *Cluster {
	t.Helper()
	if opts.Nodes == 0 {
		opts.Nodes = 3
	}
	if opts.Ready == 0 {
		opts.Ready = 90 * time.Second
	}
	host := func(i int) string {
		if opts.Host != nil {
			return opts.Host(i)
		}
		return "127.0.0.1"
	}
	routeHost := func(i int) string {
		if opts.RouteHost != nil {
			return opts.RouteHost(i)
		}
		return host(i)
	}
	ports := FreePorts(t, 2*opts.Nodes)
	c := &Cluster{Token: randomHex(t, 32), bin: bin, ready: opts.Ready}
	var routes []string
	for i := 0; i < opts.Nodes; i++ {
		routes = append(routes, fmt.Sprintf("nats://%s", net.JoinHostPort(routeHost(i), fmt.Sprint(ports[2*i+1]))))
	}
	routeToken := randomHex(t, 32)
	for i := 0; i < opts.Nodes; i++ {
		name := fmt.Sprintf("n%d", i+1)
		// No fsync per write: every acked write is on a majority of the
		// nodes, a SIGKILL leaves written pages to the OS, and an fsync per
		// replicated write makes a loaded test machine crawl (Env may set
		// AGENTPROTO_NATS_SYNC_ALWAYS=true again: the last value wins).
		env := []string{"AGENTPROTO_TOKEN=" + c.Token, "AGENTPROTO_NODE_NAME=" + name, "AGENTPROTO_NATS_SYNC_ALWAYS=false"}
		if opts.NATSURL != "" {
			env = append(env, "AGENTPROTO_NATS_URL="+opts.NATSURL, "AGENTPROTO_NATS_CLIENT_TOKEN="+opts.NATSToken)
		} else {
			env = append(env, "AGENTPROTO_CLUSTER_NAME=e2e",
				"AGENTPROTO_CLUSTER_LISTEN="+net.JoinHostPort(routeHost(i), fmt.Sprint(ports[2*i+1])),
				"AGENTPROTO_CLUSTER_ROUTES="+strings.Join(routes, ","),
				"AGENTPROTO_CLUSTER_TOKEN="+routeToken)
		}
		if !isLoopback(host(i)) || !isLoopback(routeHost(i)) {
			env = append(env, "AGENTPROTO_ALLOW_REMOTE=true", "AGENTPROTO_ALLOW_INSECURE_REMOTE=true")
		}
		env = append(env, opts.Env...)
		if opts.NodeEnv != nil {
			env = append(env, opts.NodeEnv(i)...)
		}
		var wrap []string
		if opts.Wrap != nil {
			wrap = opts.Wrap(i)
		}
		c.specs = append(c.specs, nodeSpec{name: name, home: t.TempDir(), listen: net.JoinHostPort(host(i), fmt.Sprint(ports[2*i])),
			wrap: wrap, env: env})
	}
	c.past = make([][]*Node, len(c.specs))
	t.Cleanup(func() {
		if dir := os.Getenv(LogDirEnv); dir != "" {
			name := filepath.Join(dir, strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())+".log")
			if err := os.WriteFile(name, []byte(c.Logs()), 0o600); err != nil {
				t.Logf("write the cluster logs: %v", err)
			}
		}
		if t.Failed() {
			logs := c.Logs()
			if len(logs) > FailureLogBytes {
				logs = "...\n" + logs[len(logs)-FailureLogBytes:]
			}
			t.Logf("cluster logs:\n%s", logs)
		}
	})
	c.Nodes = make([]*Node, len(c.specs))
	return c
}

// Launch starts node i (not yet started by PrepareCluster, or stopped)
// and returns at once.
func (c *Cluster) Launch(t testing.TB, i int) *Node {
	t.Helper()
	n := c.launch(t, i)
	c.mu.Lock()
	if c.Nodes[i] != nil {
		c.past[i] = append(c.past[i], c.Nodes[i])
	}
	c.Nodes[i] = n
	c.mu.Unlock()
	return n
}

// WaitReady waits until every launched node is ready (each within the
// cluster's bound).
func (c *Cluster) WaitReady(t testing.TB) {
	t.Helper()
	c.waitAll(t)
}

// launch starts node i's process from its spec.
func (c *Cluster) launch(t testing.TB, i int) *Node {
	t.Helper()
	s := c.specs[i]
	n := LaunchWrapped(t, s.wrap, c.bin, s.home, s.listen, s.env...)
	n.Name = s.name
	return n
}

// waitAll waits until every node is ready, each within the cluster's
// bound, concurrently.
func (c *Cluster) waitAll(t testing.TB) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		if n != nil {
			wg.Go(func() { errs[i] = n.waitReady(c.ready) })
		}
	}
	wg.Wait()
	for i, e := range errs {
		if e != "" {
			t.Fatalf("node %s: %s\n%s", c.specs[i].name, e, c.Logs())
		}
	}
}

// Kill SIGKILLs node i and waits for it to exit.
func (c *Cluster) Kill(i int) { c.Nodes[i].Kill() }

// Restart starts node i again on its home, ports and environment (after
// Kill or Stop) and waits until it is ready.
func (c *Cluster) Restart(t testing.TB, i int) *Node {
	t.Helper()
	n := c.launch(t, i)
	c.mu.Lock()
	c.past[i] = append(c.past[i], c.Nodes[i])
	c.Nodes[i] = n
	c.mu.Unlock()
	began := time.Now()
	if e := n.waitReady(c.ready); e != "" {
		t.Fatalf("node %s restart: %s\n%s", c.specs[i].name, e, c.Logs())
	}
	t.Logf("%s ready again in %s", n.Name, time.Since(began).Round(100*time.Millisecond))
	return n
}

// URLs returns every node's API URL, by index.
func (c *Cluster) URLs() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, len(c.specs))
	for i, s := range c.specs {
		out[i] = "http://" + s.listen
	}
	return out
}

// Node returns node i (the current process after a Restart).
func (c *Cluster) Node(i int) *Node {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.Nodes[i]
}

// Logs returns every node's output (a restarted node's earlier runs
// first), each line prefixed with its name.
func (c *Cluster) Logs() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b strings.Builder
	for i, n := range c.Nodes {
		for run, p := range append(append([]*Node(nil), c.past[i]...), n) {
			if p == nil {
				continue // never launched
			}
			for _, line := range strings.Split(strings.TrimRight(p.Logs.String(), "\n"), "\n") {
				fmt.Fprintf(&b, "[%s.%d] %s\n", c.specs[i].name, run, line)
			}
		}
	}
	return b.String()
}

// FreePorts reserves n free loopback TCP ports below the kernel's
// ephemeral range (internal/freeport): a port released here is not
// handed to another process's outgoing connection or :0 listener before
// the node binds it. A port may still be taken by another process in
// between, which makes the node fail its start, loudly.
func FreePorts(t testing.TB, n int) []int {
	t.Helper()
	ports, err := freeport.Take(n)
	if err != nil {
		t.Fatalf("reserve ports: %v", err)
	}
	return ports
}

func isLoopback(host string) bool {
	ip := net.ParseIP(host)
	return host == "localhost" || (ip != nil && ip.IsLoopback())
}

func randomHex(t testing.TB, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatalf("random: %v", err)
	}
	return hex.EncodeToString(b)
}
