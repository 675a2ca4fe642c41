package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
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
		c, err := startClusterNodes(ctx, filepath.Join(root, "boot-"+strconv.Itoa(i+1)), o.Binary, o.Cluster, o.clusterFsync(), "boot")
		if err != nil {
			return res, fmt.Errorf("first boot %d: %w", i+1, err)
		}
		res.FirstMs = append(res.FirstMs, ms(c.booted))
		c.stopAll()
		err = c.startAll(ctx)
		res.LaterMs = append(res.LaterMs, ms(c.booted))
		logs := c.logs()
		c.close()
		if err != nil {
			return res, fmt.Errorf("later boot %d: %w%s", i+1, err, logs)
		}
		o.Progress("cluster: boot %d/%d: first %.1f s, later %.1f s (load %.1f)", i+1, o.Boots,
			res.FirstMs[i]/1000, res.LaterMs[i]/1000, res.Load1[i])
	}
	res.First, res.Later = spread(res.FirstMs), spread(res.LaterMs)
	return res, nil
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
