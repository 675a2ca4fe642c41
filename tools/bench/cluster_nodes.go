package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentproto/sentinel/bus"
	"github.com/agentproto/sentinel/internal/freeport"
)

// clusterStartTimeout bounds one node's start to /readyz 200 (cluster
// formation and R3 provisioning on a loaded machine take a while).
const clusterStartTimeout = 2 * time.Minute

// healthyTimeout bounds the wait for every node ready and the events
// stream with a leader and every replica current.
const healthyTimeout = 2 * time.Minute

// clusterName prefixes the nats cluster name of the bench's nodes.
const clusterName = "sentinel-bench"

// clusterNodes are n `sentinel serve` processes of one binary clustered on
// loopback ports, each on its own fresh home, with one API token, and the
// bench's own NATS client connection to their client listeners.
//
// The methods are called from the phase's goroutine only; urls is read by
// the failover probes while no node is (re)started.
type clusterNodes struct {
	bin   string
	fsync bool
	names []string
	homes []string
	env   [][]string
	nodes []*node // nil while a node is down
	urls  []string
	token string
	http  *http.Client

	nc *bus.Conn
	js jetstream.JetStream

	// booted is how long the nodes took from their processes' start to
	// every one answering /readyz 200 (startClusterNodes, startAll).
	booted time.Duration
}

// startClusterNodes starts n nodes at once (each waits for the JetStream
// meta leader, which needs a majority) and connects the bench to them.
// Nodes are named prefix-1..n; extra (KEY=value) is added to every node's
// environment.
func startClusterNodes(ctx context.Context, root, bin string, n int, fsync bool, prefix string, extra ...string) (*clusterNodes, error) {
	ports, err := freeport.Take(2 * n)
	if err != nil {
		return nil, err
	}
	secrets := make([]string, 3)
	for i := range secrets {
		if secrets[i], err = randomSecret(); err != nil {
			return nil, err
		}
	}
	apiToken, routeToken, natsToken := secrets[0], secrets[1], secrets[2]
	// A name of its own: a route that reached another cluster's listener
	// is refused for the name (and the route token) alone.
	cluster := clusterName + "-" + strconv.FormatUint(mrand.Uint64(), 36)
	c := &clusterNodes{bin: bin, fsync: fsync, token: apiToken, http: newHTTPClient(64),
		nodes: make([]*node, n), urls: make([]string, n)}
	var routes, clientURLs []string
	for i := range n {
		routes = append(routes, "nats://127.0.0.1:"+strconv.Itoa(ports[2*i]))
		clientURLs = append(clientURLs, "nats://127.0.0.1:"+strconv.Itoa(ports[2*i+1]))
	}
	for i := range n {
		name := prefix + "-" + strconv.Itoa(i+1)
		home := filepath.Join(root, name)
		if err := os.MkdirAll(home, 0o700); err != nil {
			return nil, err
		}
		env := []string{
			"AGENTPROTO_NODE_NAME=" + name,
			"AGENTPROTO_CLUSTER_NAME=" + cluster,
			"AGENTPROTO_CLUSTER_LISTEN=127.0.0.1:" + strconv.Itoa(ports[2*i]),
			"AGENTPROTO_CLUSTER_ROUTES=" + strings.Join(routes, ","),
			"AGENTPROTO_CLUSTER_TOKEN=" + routeToken,
			"AGENTPROTO_NATS_LISTEN=127.0.0.1:" + strconv.Itoa(ports[2*i+1]),
			"AGENTPROTO_NATS_LISTEN_TOKEN=" + natsToken,
			"AGENTPROTO_TOKEN=" + apiToken,
		}
		env = append(env, extra...)
		c.names, c.homes, c.env = append(c.names, name), append(c.homes, home), append(c.env, blankInherited(env))
	}
	if err := c.startAll(ctx); err != nil {
		c.close()
		return nil, err
	}
	// The bench is one more client of the cluster: it reconnects to a
	// surviving node when the one it talks to is killed.
	c.nc, err = bus.Dial(ctx, bus.ClientConfig{URLs: clientURLs, Token: natsToken, Name: "sentinel-bench",
		InOrder: true, ReconnectWait: 100 * time.Millisecond})
	if err != nil {
		c.close()
		return nil, fmt.Errorf("connect to the cluster's client listeners: %w", err)
	}
	if c.js, err = jetstream.New(c.nc); err != nil {
		c.close()
		return nil, err
	}
	return c, nil
}

// startAll starts every node at once on its home and waits until each is
// ready; booted is how long that took.
func (c *clusterNodes) startAll(ctx context.Context) error {
	errs := make([]error, len(c.homes))
	var wg sync.WaitGroup
	t0 := time.Now()
	for i := range c.homes {
		wg.Go(func() { errs[i] = c.start(ctx, i) })
	}
	wg.Wait()
	c.booted = time.Since(t0)
	return errors.Join(errs...)
}

// start runs node i's binary on its home and waits until it is ready.
func (c *clusterNodes) start(ctx context.Context, i int) error {
	sctx, cancel := context.WithTimeout(ctx, clusterStartTimeout)
	defer cancel()
	n, err := startBinary(sctx, c.bin, c.homes[i], c.fsync, c.env[i]...)
	if err != nil {
		return fmt.Errorf("start %s: %w", c.names[i], err)
	}
	c.nodes[i], c.urls[i] = n, n.url
	return nil
}

// kill SIGKILLs node i and returns the moment just before the signal.
func (c *clusterNodes) kill(i int) time.Time {
	t0 := time.Now()
	if n := c.nodes[i]; n != nil {
		n.kill()
		n.http.CloseIdleConnections()
	}
	c.nodes[i] = nil
	return t0
}

// index returns the index of the node named name, or -1.
func (c *clusterNodes) index(name string) int {
	for i, n := range c.names {
		if n == name {
			return i
		}
	}
	return -1
}

// streamState returns a stream's leader and whether it has one and every
// one of its replicas is current.
func (c *clusterNodes) streamState(ctx context.Context, stream string) (leader string, healthy bool, err error) {
	ictx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	s, err := c.js.Stream(ictx, stream)
	if err != nil {
		return "", false, err
	}
	info, err := s.Info(ictx)
	if err != nil {
		return "", false, err
	}
	ci := info.Cluster
	if ci == nil || ci.Leader == "" {
		return "", false, nil
	}
	if len(ci.Replicas) < info.Config.Replicas-1 {
		return ci.Leader, false, nil
	}
	for _, r := range ci.Replicas {
		if !r.Current || r.Offline {
			return ci.Leader, false, nil
		}
	}
	return ci.Leader, true, nil
}

// waitHealthy waits until every node answers /readyz 200 and the events
// stream has a leader and every replica current; it returns that leader.
func (c *clusterNodes) waitHealthy(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, healthyTimeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		leader, ok, err := c.streamState(ctx, bus.StreamEvents)
		switch {
		case err != nil:
			last = err
		case !ok:
			last = fmt.Errorf("%s: leader %q, a replica is not current", bus.StreamEvents, leader)
		default:
			last = c.allReady(ctx)
			if last == nil {
				return leader, nil
			}
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("the cluster did not become healthy within %s: %w", healthyTimeout, last)
		case <-tick.C:
		}
	}
}

// allReady checks /readyz on every node.
func (c *clusterNodes) allReady(ctx context.Context) error {
	for i, u := range c.urls {
		if c.nodes[i] == nil {
			return fmt.Errorf("%s is down", c.names[i])
		}
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		req, err := http.NewRequestWithContext(rctx, http.MethodGet, u+"/readyz", nil)
		if err != nil {
			cancel()
			return err
		}
		resp, err := c.http.Do(req)
		cancel()
		if err != nil {
			return fmt.Errorf("%s /readyz: %w", c.names[i], err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s /readyz: %d", c.names[i], resp.StatusCode)
		}
	}
	return nil
}

// logs returns the tail of every node's log, for an error report.
func (c *clusterNodes) logs() string {
	var b strings.Builder
	for i, n := range c.nodes {
		if n != nil && n.logs != nil {
			tail := n.logs.String()
			if len(tail) > 2048 {
				tail = tail[len(tail)-2048:]
			}
			fmt.Fprintf(&b, "\n--- %s ---\n%s", c.names[i], tail)
		}
	}
	return b.String()
}

// close stops every node cleanly (SIGKILL past the deadline) and the
// bench's connection.
func (c *clusterNodes) close() {
	if c.nc != nil {
		c.nc.Close()
	}
	c.stopAll()
	c.http.CloseIdleConnections()
}

// stopAll stops every running node at once, each cleanly (SIGKILL past
// 30 s), and marks it down.
func (c *clusterNodes) stopAll() {
	var wg sync.WaitGroup
	for i, n := range c.nodes {
		if n == nil {
			continue
		}
		c.nodes[i] = nil
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_ = n.stop(ctx)
		})
	}
	wg.Wait()
}

func randomSecret() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// blankInherited returns env plus an empty value for every AGENTPROTO_*
// variable of this process that env and startBinary do not set, so the
// operator's own settings (nats.url, a config of theirs) never leak into
// the bench's nodes (an empty variable counts as unset).
func blankInherited(env []string) []string {
	set := map[string]bool{"AGENTPROTO_HOME": true, "AGENTPROTO_TESTING_FAKE_PROVIDER": true,
		"AGENTPROTO_NATS_SYNC_ALWAYS": true, "AGENTPROTO_SENTINEL_AUTO_WATCH_PRS": true}
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		set[k] = true
	}
	out := append([]string(nil), env...)
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "AGENTPROTO_") && !set[k] {
			out = append(out, k+"=")
		}
	}
	return out
}
