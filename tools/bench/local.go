package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"syscall"
)

// LocalCluster is n clustered `sentinel serve` processes of one binary on
// loopback ports, each on its own home under a root folder, with one API
// token and the test-only fake provider enabled: the cluster of the bench's
// cluster phase, exported for `sentinel chaos` (tools/chaos), which
// kills, pauses and restarts its nodes.
//
// Its methods are safe for concurrent use; Start and Stop of one node are
// not meant to run concurrently with another fault on the same node.
type LocalCluster struct {
	mu   sync.Mutex
	c    *clusterNodes
	urls []string
}

// StartLocalCluster starts n >= 3 nodes of bin under root, named
// prefix-1..n (fsync off: a chaos run measures faults, not disks), with
// extra (KEY=value) in every node's environment, and waits until every node is ready and the events
// stream has every replica current.
func StartLocalCluster(ctx context.Context, root, bin, prefix string, n int, extra ...string) (*LocalCluster, error) {
	if n < clusterReplicas {
		return nil, fmt.Errorf("a local cluster needs at least %d nodes (streams are R%d), not %d", clusterReplicas, clusterReplicas, n)
	}
	c, err := startClusterNodes(ctx, root, bin, n, false, prefix, extra...)
	if err != nil {
		return nil, err
	}
	if _, err := c.waitHealthy(ctx); err != nil {
		logs := c.logs()
		c.close()
		return nil, fmt.Errorf("%w%s", err, logs)
	}
	return &LocalCluster{c: c, urls: append([]string(nil), c.urls...)}, nil
}

// Names returns the nodes' names, by index.
func (l *LocalCluster) Names() []string { return append([]string(nil), l.c.names...) }

// Token returns the service's API token.
func (l *LocalCluster) Token() string { return l.c.token }

// URLs returns every node's API URL, by index: the last address of a node
// that is down (as a load balancer keeps its backend).
func (l *LocalCluster) URLs() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.urls...)
}

// Kill SIGKILLs node i (a no-op when it is down).
func (l *LocalCluster) Kill(i int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.c.kill(i)
}

// Signal sends sig (SIGSTOP, SIGCONT) to node i's process.
func (l *LocalCluster) Signal(i int, sig syscall.Signal) error {
	l.mu.Lock()
	n := l.c.nodes[i]
	l.mu.Unlock()
	if n == nil || n.cmd == nil || n.cmd.Process == nil {
		return fmt.Errorf("%s is down", l.c.names[i])
	}
	if err := n.cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("signal %s: %w", l.c.names[i], err)
	}
	return nil
}

// Stop stops node i gracefully (SIGTERM, SIGKILL past ctx).
func (l *LocalCluster) Stop(ctx context.Context, i int) error {
	l.mu.Lock()
	n := l.c.nodes[i]
	l.c.nodes[i] = nil
	l.mu.Unlock()
	if n == nil {
		return nil
	}
	if err := n.stop(ctx); err != nil {
		var exit interface{ ExitCode() int }
		if !errors.As(err, &exit) {
			return fmt.Errorf("stop %s: %w", l.c.names[i], err)
		}
	}
	return nil
}

// Start starts node i again on its home and waits until it is ready.
func (l *LocalCluster) Start(ctx context.Context, i int) error {
	sctx, cancel := context.WithTimeout(ctx, clusterStartTimeout)
	defer cancel()
	n, err := startBinary(sctx, l.c.bin, l.c.homes[i], l.c.fsync, l.c.env[i]...)
	if err != nil {
		return fmt.Errorf("start %s: %w", l.c.names[i], err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.c.nodes[i], l.c.urls[i], l.urls[i] = n, n.url, n.url
	return nil
}

// WaitHealthy waits (bounded) until every node is ready and the events
// stream has a leader and every replica current.
func (l *LocalCluster) WaitHealthy(ctx context.Context) error {
	l.mu.Lock()
	c := *l.c
	c.nodes, c.urls = append([]*node(nil), l.c.nodes...), append([]string(nil), l.c.urls...)
	l.mu.Unlock()
	_, err := c.waitHealthy(ctx)
	return err
}

// Logs returns the tail of every running node's log.
func (l *LocalCluster) Logs() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.c.logs()
}

// Close stops every node (SIGCONT first, so a paused one can stop) and
// removes nothing: the caller owns root.
func (l *LocalCluster) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, n := range l.c.nodes {
		if n != nil && n.cmd != nil && n.cmd.Process != nil {
			_ = n.cmd.Process.Signal(syscall.SIGCONT)
		}
	}
	l.c.close()
}
