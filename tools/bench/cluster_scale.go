package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"
)

// ClusterScaleResult is Sentinels sentinels spread over the cluster
// phase's nodes (created round-robin through every node's API, after the
// push measurement and the failovers): the create rate, a quiet tick of
// the whole cluster, a restart of every node at once, and each node's RSS
// (docs/SCALE.md reads it).
type ClusterScaleResult struct {
	Sentinels         int    `json:"sentinels"`
	Nodes             int    `json:"nodes"`
	Fsync             string `json:"fsync"`
	CreateConcurrency int    `json:"createConcurrency"`
	// CreatesPerSec is POST /sentinels throughput over every node
	// (CreateConcurrency clients, request i to node i mod Nodes).
	CreatesPerSec float64 `json:"createsPerSec"`
	// QuietTick is one POST /sentinels/poll (every node polls what it
	// owns, the answer waits for all); CPUMs sums every node's CPU.
	QuietTick TickCost `json:"quietTick"`
	// StopMs is every node stopped at once (SIGTERM to the last exit).
	StopMs float64 `json:"stopMs"`
	// RestartToReadyMs is every node started at once on its populated
	// home to the last one answering /readyz 200.
	RestartToReadyMs float64 `json:"restartToReadyMs"`
	// PerNode is each node's RSS.
	PerNode []ClusterScaleNode `json:"perNode"`
	// RSSAfterRestartMiB is the largest node's RSS when ready again.
	RSSAfterRestartMiB float64 `json:"rssAfterRestartMiB"`
}

// ClusterScaleNode is one node's memory through the scale step.
type ClusterScaleNode struct {
	Name string `json:"name"`
	// RSSBaseMiB is the node's RSS before the step's creates.
	RSSBaseMiB         float64 `json:"rssBaseMiB"`
	RSSAfterCreateMiB  float64 `json:"rssAfterCreateMiB"`
	RSSAfterRestartMiB float64 `json:"rssAfterRestartMiB"`
}

// runClusterScale creates o.ClusterSentinels sentinels over the running
// nodes of c, then times a quiet tick and a restart of the whole cluster,
// and checks that every node lists every sentinel afterwards (those of
// the push measurement included).
func runClusterScale(ctx context.Context, c *clusterNodes, o Options) (ClusterScaleResult, error) {
	res := ClusterScaleResult{Sentinels: o.ClusterSentinels, Nodes: o.Cluster, Fsync: fsyncName(o.clusterFsync()), CreateConcurrency: o.CreateConcurrency}
	if _, err := c.waitHealthy(ctx); err != nil {
		return res, err
	}
	before, err := countSentinels(ctx, c.nodes[0])
	if err != nil {
		return res, err
	}
	res.PerNode = make([]ClusterScaleNode, len(c.nodes))
	for i, n := range c.nodes {
		res.PerNode[i] = ClusterScaleNode{Name: c.names[i], RSSBaseMiB: rssMiB(n.pid())}
	}

	o.Progress("cluster scale: creating %d sentinels over %d nodes (%d clients)", o.ClusterSentinels, o.Cluster, o.CreateConcurrency)
	t0 := time.Now()
	if err := createSentinels(ctx, o.ClusterSentinels, o.CreateConcurrency, func(i int) *node { return c.nodes[i%len(c.nodes)] }); err != nil {
		return res, err
	}
	res.CreatesPerSec = float64(o.ClusterSentinels) / time.Since(t0).Seconds()
	for i, n := range c.nodes {
		res.PerNode[i].RSSAfterCreateMiB = rssMiB(n.pid())
	}

	o.Progress("cluster scale: %d quiet poll ticks over %d sentinels", o.Ticks, o.ClusterSentinels)
	if res.QuietTick, err = clusterQuietTicks(ctx, c, o.Ticks, o.ClusterSentinels); err != nil {
		return res, err
	}

	o.Progress("cluster scale: restart of every node at once")
	t0 = time.Now()
	c.stopAll()
	res.StopMs = ms(time.Since(t0))
	if err := c.startAll(ctx); err != nil {
		return res, fmt.Errorf("restart: %w", err)
	}
	res.RestartToReadyMs = ms(c.booted)
	for i, n := range c.nodes {
		res.PerNode[i].RSSAfterRestartMiB = rssMiB(n.pid())
		res.RSSAfterRestartMiB = max(res.RSSAfterRestartMiB, res.PerNode[i].RSSAfterRestartMiB)
	}
	for i, n := range c.nodes {
		got, err := countSentinels(ctx, n)
		if err != nil {
			return res, fmt.Errorf("%s after the restart: %w", c.names[i], err)
		}
		if want := before + o.ClusterSentinels; got != want {
			return res, fmt.Errorf("after the restart %s listed %d sentinels, want %d", c.names[i], got, want)
		}
	}
	return res, nil
}

// createSentinels creates count fake-provider sentinels with concurrency
// clients, request i going to the node at(i) returns (subjects
// github:bench/scale#1..count, sessions bench-scale-0..99).
func createSentinels(ctx context.Context, count, concurrency int, at func(i int) *node) error {
	return createSentinelsFrom(ctx, 0, count, concurrency, at)
}

// createSentinelsFrom is createSentinels numbering the subjects from
// first+1 (a second batch on the same node watches other PRs).
func createSentinelsFrom(ctx context.Context, first, count, concurrency int, at func(i int) *node) error {
	var next atomic.Int64
	next.Store(int64(first))
	count += first
	var wg sync.WaitGroup
	errs := make([]error, concurrency)
	for w := range concurrency {
		wg.Go(func() {
			for {
				i := int(next.Add(1))
				if i > count || ctx.Err() != nil {
					return
				}
				subject := "github:bench/scale#" + strconv.Itoa(i)
				if _, _, err := at(i).watch(ctx, subject, "bench-scale-"+strconv.Itoa(i%100)); err != nil {
					errs[w] = fmt.Errorf("create sentinel %d: %w", i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return ctx.Err()
}

// clusterQuietTicks runs ticks POST /sentinels/poll calls through the
// first node (each a tick of every node over what it owns) and returns the
// median wall time and the mean CPU time summed over the nodes.
func clusterQuietTicks(ctx context.Context, c *clusterNodes, ticks, sentinels int) (TickCost, error) {
	cpu := func() time.Duration {
		var sum time.Duration
		for _, n := range c.nodes {
			sum += cpuTime(n.pid())
		}
		return sum
	}
	var walls []time.Duration
	c0 := cpu()
	for range ticks {
		t0 := time.Now()
		if _, err := c.nodes[0].call(ctx, http.MethodPost, "/sentinels/poll", nil, nil); err != nil {
			return TickCost{}, err
		}
		walls = append(walls, time.Since(t0))
	}
	tc := TickCost{Ticks: ticks, WallMs: summarize(walls).P50Ms, CPUMs: ms((cpu() - c0) / time.Duration(ticks))}
	if sentinels > 0 {
		tc.WallPerSentinelUs = tc.WallMs * 1000 / float64(sentinels)
		tc.CPUPerSentinelUs = tc.CPUMs * 1000 / float64(sentinels)
	}
	return tc, nil
}

// countSentinels walks GET /sentinels?limit=1000 to the last page and
// returns how many sentinels the node lists.
func countSentinels(ctx context.Context, n *node) (int, error) {
	total, after := 0, ""
	for {
		path := "/sentinels?limit=1000"
		if after != "" {
			path += "&after=" + url.QueryEscape(after)
		}
		var out struct {
			Sentinels []struct {
				ID string `json:"id"`
			} `json:"sentinels"`
			Next string `json:"next"`
		}
		if _, err := n.call(ctx, http.MethodGet, path, nil, &out); err != nil {
			return total, err
		}
		total += len(out.Sentinels)
		if out.Next == "" || len(out.Sentinels) == 0 {
			return total, nil
		}
		after = out.Next
	}
}

// writeTable renders the cluster scale step.
func (s *ClusterScaleResult) writeTable(out io.Writer) {
	if s == nil {
		return
	}
	w := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	fmt.Fprintf(out, "\nCluster scale: %d sentinels over %d nodes (R3, fsync=%s)\n", s.Sentinels, s.Nodes, s.Fsync)
	fmt.Fprintf(w, "create (POST /sentinels round-robin, %d clients)\t%.0f sentinels/s\n", s.CreateConcurrency, s.CreatesPerSec)
	fmt.Fprintf(w, "quiet poll tick of the cluster (%d ticks)\t%.1f ms wall (median), %.1f ms CPU of all nodes (mean)\n", s.QuietTick.Ticks, s.QuietTick.WallMs, s.QuietTick.CPUMs)
	fmt.Fprintf(w, "stop of every node\t%.0f ms\n", s.StopMs)
	fmt.Fprintf(w, "restart of every node to ready\t%.0f ms\n", s.RestartToReadyMs)
	for _, n := range s.PerNode {
		fmt.Fprintf(w, "%s RSS empty / after create / after restart\t%.0f / %.0f / %.0f MiB\n", n.Name, n.RSSBaseMiB, n.RSSAfterCreateMiB, n.RSSAfterRestartMiB)
	}
	w.Flush()
}
