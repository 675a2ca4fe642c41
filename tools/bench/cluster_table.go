package bench

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/agentproto/sentinel/bus"
)

// writeTable renders the cluster phase: the push path beside its
// baselines, then each kill and the failover summary against the targets.
func (c *ClusterResult) writeTable(out io.Writer, warmup int) {
	w := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	fmt.Fprintf(out, "\nCluster: %d `sentinel serve` nodes on loopback, R%d, fsync=%s: push round-robin over the nodes beside raw JetStream R%d and an HTTP relay on the same servers (%d events each, %d warm-up, concurrency %d)\n",
		c.Nodes, c.Replicas, c.Fsync, c.Replicas, c.Events, warmup, c.Concurrency)
	fmt.Fprintln(w, "path\tevents/s\tp50 ms\tp90 ms\tp99 ms\tmax ms")
	row := func(name string, x Path) {
		fmt.Fprintf(w, "%s\t%.0f\t%.3f\t%.3f\t%.3f\t%.3f\n", name, x.EventsPerSec, x.Latency.P50Ms, x.Latency.P90Ms, x.Latency.P99Ms, x.Latency.MaxMs)
	}
	row(fmt.Sprintf("push (%d nodes, R%d)", c.Nodes, c.Replicas), c.Push)
	row(fmt.Sprintf("raw JetStream R%d", c.Replicas), c.Raw)
	row(fmt.Sprintf("HTTP relay R%d", c.Replicas), c.Relay)
	fmt.Fprintf(w, "push/raw\t%.3fx (target >= 0.50x: %s)\t+%.3f\t\t+%.3f\t\n", c.Ratio, met(c.Ratio >= 0.5), c.AddedP50Ms, c.AddedP99Ms)
	fmt.Fprintf(w, "push/relay\t%.2fx\t+%.3f\t\t+%.3f\t\n", c.RelayRatio, c.RelayAddedP50Ms, c.RelayAddedP99Ms)
	w.Flush()
	writeSteps(out, "node steps, all nodes", c.StepsUs)
	c.Boot.writeTable(out)
	c.Scale.writeTable(out)
	f := c.Failover
	if len(f.Samples) == 0 {
		return
	}
	fmt.Fprintf(out, "\nFailover: SIGKILL of the node leading %s to the next push answered 200 by a surviving node (%d kills)\n", bus.StreamEvents, f.Kills)
	fmt.Fprintln(w, "kill\tkilled\tms\taccepted by\tprobes\trefused\t503\tother\tcodes\tnew leader\trestart to ready ms")
	for i, s := range f.Samples {
		fmt.Fprintf(w, "%d\t%s\t%.0f\t%s\t%d\t%d\t%d\t%d\t%s\t%s\t%.0f\n", i+1, s.Killed, s.Ms, s.AcceptedBy, s.Probes, s.Refused, s.Unavailable, s.Failed, codes(s.Codes), s.NewLeader, s.RestartToReadyMs)
	}
	w.Flush()
	fmt.Fprintf(w, "median\t%.0f ms (target <= %d: %s)\n", f.MedianMs, FailoverMedianTargetMs, met(f.MedianMs <= FailoverMedianTargetMs))
	fmt.Fprintf(w, "max\t%.0f ms (target <= %d: %s)\n", f.MaxMs, FailoverMaxTargetMs, met(f.MaxMs <= FailoverMaxTargetMs))
	w.Flush()
}

// codes renders error-code counts sorted by code ("-" for none).
func codes(m map[string]int) string {
	if len(m) == 0 {
		return "-"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "%s:%d", k, m[k])
	}
	return b.String()
}

func met(ok bool) string {
	if ok {
		return "met"
	}
	return "not met"
}

// writeTable renders the boots against the targets (nothing for nil).
func (b *BootResult) writeTable(out io.Writer) {
	if b == nil || b.Boots == 0 {
		return
	}
	w := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	fmt.Fprintf(out, "\nBoot to ready: %d nodes started together, every node /readyz 200 (%d rounds; load1 %.1f to %.1f)\n",
		b.Nodes, b.Boots, minOf(b.Load1), maxOf(b.Load1))
	fmt.Fprintln(w, "boot\tmin s\tmedian s\tmax s\twaiting for JetStream: median s\tmax s\ttargets")
	fmt.Fprintf(w, "first (fresh homes)\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\tmedian <= %d s: %s, max <= %d s: %s\n", b.First.MinMs/1000, b.First.MedianMs/1000, b.First.MaxMs/1000,
		b.FirstWait.MedianMs/1000, b.FirstWait.MaxMs/1000,
		BootMedianTargetMs/1000, met(b.First.MedianMs <= BootMedianTargetMs), BootMaxTargetMs/1000, met(b.First.MaxMs <= BootMaxTargetMs))
	fmt.Fprintf(w, "later (same homes)\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t\n", b.Later.MinMs/1000, b.Later.MedianMs/1000, b.Later.MaxMs/1000,
		b.LaterWait.MedianMs/1000, b.LaterWait.MaxMs/1000)
	w.Flush()
}
