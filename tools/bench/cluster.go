package bench

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/agentproto/sentinel/runtime/metrics"
)

// clusterReplicas is the replication of every stream and bucket of a
// clustered node (bus.replicas 0: 3 when clustered), and of the raw
// baseline's streams.
const clusterReplicas = 3

// Failover targets of the cluster issue, in milliseconds.
const (
	FailoverMedianTargetMs = 6000
	FailoverMaxTargetMs    = 10000
)

// ClusterResult is the cluster phase: the push path through Nodes local
// `sentinel serve` processes (every stream R3) beside raw JetStream R3 on
// the same servers in the same run, then failover. The push figures carry
// the push phase's JSON names (push, rawJetStream, throughputRatio,
// addedP50Ms, ...): PushResult is embedded.
type ClusterResult struct {
	PushResult
	Nodes    int            `json:"nodes"`
	Replicas int            `json:"replicas"`
	Failover FailoverResult `json:"failover"`
	// Boot is boot-to-ready, first and later boots (nil with Boots 0).
	Boot *BootResult `json:"boot,omitempty"`
	// Scale is ClusterSentinels sentinels over fresh nodes (nil with
	// ClusterSentinels 0).
	Scale *ClusterScaleResult `json:"scale,omitempty"`
}

// runCluster starts o.Cluster nodes of o.Binary on fresh homes under root,
// measures the push path beside its baselines, then o.Kills failovers.
func runCluster(ctx context.Context, root string, o Options) (ClusterResult, error) {
	res := ClusterResult{Nodes: o.Cluster, Replicas: clusterReplicas}
	res.Fsync, res.Concurrency, res.Events = fsyncName(o.clusterFsync()), o.Concurrency, o.Events
	if o.Binary == "" {
		return res, errors.New("the cluster phase runs this binary's `serve` as child processes: it needs Options.Binary (no --in-process)")
	}
	if o.Cluster < clusterReplicas {
		return res, fmt.Errorf("the cluster phase needs at least %d nodes (streams are R%d), not %d", clusterReplicas, clusterReplicas, o.Cluster)
	}
	if o.Boots > 0 {
		o.Progress("cluster: %d boots of %d nodes, first (fresh homes) and later (the same homes again)", o.Boots, o.Cluster)
		b, err := runBoots(ctx, filepath.Join(root, "boots"), o)
		if err != nil {
			return res, fmt.Errorf("boots: %w", err)
		}
		res.Boot = &b
	}
	o.Progress("cluster: starting %d nodes (fsync=%s)", o.Cluster, res.Fsync)
	c, err := startClusterNodes(ctx, filepath.Join(root, "cluster"), o.Binary, o.Cluster, o.clusterFsync(), "bench")
	if err != nil {
		return res, err
	}
	defer c.close()
	if _, err := c.waitHealthy(ctx); err != nil {
		return res, fmt.Errorf("%w%s", err, c.logs())
	}
	o.Progress("cluster: push path round-robin over %d nodes and raw JetStream R%d, %d events each, concurrency %d", o.Cluster, clusterReplicas, o.Events, o.Concurrency)
	if err := runClusterPush(ctx, c, o, &res); err != nil {
		return res, fmt.Errorf("%w%s", err, c.logs())
	}
	if o.Kills > 0 {
		fo, err := runFailover(ctx, c, o)
		res.Failover = fo
		if err != nil {
			return res, fmt.Errorf("failover: %w%s", err, c.logs())
		}
	}
	if o.ClusterSentinels > 0 {
		s, err := runClusterScale(ctx, c, o)
		res.Scale = &s
		if err != nil {
			return res, fmt.Errorf("scale: %w%s", err, c.logs())
		}
	}
	return res, nil
}

// runClusterPush warms, then measures back to back, the push path and
// every baseline of clusterBaselines.
func runClusterPush(ctx context.Context, c *clusterNodes, o Options, res *ClusterResult) error {
	type measured struct {
		name string
		into *Path
		s    sender
	}
	push, err := newClusterPushPath(ctx, c, o.Concurrency)
	if err != nil {
		return err
	}
	paths := []measured{{name: "push", into: &res.Push, s: push}}
	defer func() {
		for _, p := range paths {
			p.s.close()
		}
	}()
	for _, b := range clusterBaselines(res) {
		s, err := b.start(ctx, c, o.Concurrency)
		if err != nil {
			return fmt.Errorf("%s: %w", b.name, err)
		}
		paths = append(paths, measured{name: b.name, into: b.into, s: s})
	}
	for _, p := range paths {
		if _, _, err := measure(ctx, o.Warmup, o.Concurrency, "warm", p.s.send); err != nil {
			return fmt.Errorf("%s warm-up: %w", p.name, err)
		}
	}
	for i, p := range paths {
		var before metrics.StepTotals
		if i == 0 {
			before, err = c.stepTotals(ctx)
			if err != nil {
				return err
			}
		}
		if p.into.Latency, p.into.EventsPerSec, err = measure(ctx, o.Events, o.Concurrency, "run", p.s.send); err != nil {
			return fmt.Errorf("%s: %w", p.name, err)
		}
		if i == 0 {
			after, err := c.stepTotals(ctx)
			if err != nil {
				return err
			}
			res.StepsUs = stepMeans(before, after)
		}
	}
	if res.Raw.EventsPerSec > 0 {
		res.Ratio = res.Push.EventsPerSec / res.Raw.EventsPerSec
	}
	res.AddedP50Ms = res.Push.Latency.P50Ms - res.Raw.Latency.P50Ms
	res.AddedP99Ms = res.Push.Latency.P99Ms - res.Raw.Latency.P99Ms
	if res.Relay.EventsPerSec > 0 {
		res.RelayRatio = res.Push.EventsPerSec / res.Relay.EventsPerSec
	}
	res.RelayAddedP50Ms = res.Push.Latency.P50Ms - res.Relay.Latency.P50Ms
	res.RelayAddedP99Ms = res.Push.Latency.P99Ms - res.Relay.Latency.P99Ms
	return nil
}
