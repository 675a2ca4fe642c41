package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"time"
)

// Boot targets of the start-up issue (first boots of a fresh cluster), in
// milliseconds.
const (
	BootMedianTargetMs = 8000
	BootMaxTargetMs    = 15000
)

// BootResult is boot-to-ready of a cluster of `sentinel serve` processes:
// each of Boots rounds starts the nodes together on fresh homes (a first
// boot: no stream exists yet, the meta group is new), stops them cleanly,
// and starts them together again on the same homes (a later boot). A boot
// lasts from the moment the processes are started to every node answering
// /readyz 200.
type BootResult struct {
	Nodes int `json:"nodes"`
	Boots int `json:"boots"`
	// FirstMs and LaterMs are each boot's time, in run order.
	FirstMs []float64 `json:"firstMs"`
	LaterMs []float64 `json:"laterMs"`
	First   Spread    `json:"first"`
	Later   Spread    `json:"later"`
	// FirstWaitMs and LaterWaitMs are the part of each boot the slowest
	// node spent waiting for JetStream (the meta leader), from its log;
	// the rest is provisioning and starting.
	FirstWaitMs []float64 `json:"firstWaitMs"`
	LaterWaitMs []float64 `json:"laterWaitMs"`
	FirstWait   Spread    `json:"firstWait"`
	LaterWait   Spread    `json:"laterWait"`
	// Load1 is the machine's 1-minute load average before each round.
	Load1 []float64 `json:"load1"`
}

// Spread is the minimum, median and maximum of a sample, in milliseconds.
type Spread struct {
	MinMs    float64 `json:"minMs"`
	MedianMs float64 `json:"medianMs"`
	MaxMs    float64 `json:"maxMs"`
}

// spread summarizes ms.
func spread(ms []float64) Spread {
	if len(ms) == 0 {
		return Spread{}
	}
	return Spread{MinMs: minOf(ms), MedianMs: median(ms), MaxMs: maxOf(ms)}
}

// runBoots measures o.Boots first and later boots of o.Cluster nodes
// under root (each round its own homes, ports and cluster name).
func runBoots(ctx context.Context, root string, o Options) (BootResult, error) {
	res := BootResult{Nodes: o.Cluster, Boots: o.Boots}
	for i := range o.Boots {
		res.Load1 = append(res.Load1, describeMachine().Load1)
		c, err := startClusterNodes(ctx, filepath.Join(root, "boot-"+strconv.Itoa(i+1)), o.Binary, o.Cluster, o.clusterFsync(), "boot",
			"AGENTPROTO_LOG_LEVEL=info")
		if err != nil {
			return res, fmt.Errorf("first boot %d: %w", i+1, err)
		}
		res.FirstMs, res.FirstWaitMs = append(res.FirstMs, ms(c.booted)), append(res.FirstWaitMs, c.waitedForJetStream())
		c.nc.Close() // the rounds send nothing; its reconnects would only log
		c.stopAll()
		err = c.startAll(ctx)
		res.LaterMs, res.LaterWaitMs = append(res.LaterMs, ms(c.booted)), append(res.LaterWaitMs, c.waitedForJetStream())
		logs := c.logs()
		c.close()
		if err != nil {
			return res, fmt.Errorf("later boot %d: %w%s", i+1, err, logs)
		}
		o.Progress("cluster: boot %d/%d: first %.1f s (%.1f s waiting for JetStream), later %.1f s (%.1f s) (load %.1f)", i+1, o.Boots,
			res.FirstMs[i]/1000, res.FirstWaitMs[i]/1000, res.LaterMs[i]/1000, res.LaterWaitMs[i]/1000, res.Load1[i])
	}
	res.First, res.Later = spread(res.FirstMs), spread(res.LaterMs)
	res.FirstWait, res.LaterWait = spread(res.FirstWaitMs), spread(res.LaterWaitMs)
	return res, nil
}

// waitedRE finds the node's "JetStream answers" line (boot.go) and how
// long it waited.
var waitedRE = regexp.MustCompile(`msg="JetStream answers" waited=(\S+)`)

// waitedForJetStream is the longest wait for JetStream of the running
// nodes, in ms, read from their logs (0 when no node logged it).
func (c *clusterNodes) waitedForJetStream() float64 {
	longest := 0.0
	for _, n := range c.nodes {
		if n == nil || n.logs == nil {
			continue
		}
		if m := waitedRE.FindStringSubmatch(n.logs.String()); m != nil {
			if d, err := time.ParseDuration(m[1]); err == nil {
				longest = max(longest, ms(d))
			}
		}
	}
	return longest
}

func minOf(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	m := v[0]
	for _, x := range v[1:] {
		m = min(m, x)
	}
	return m
}
