package bench

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/agentproto/sentinel/runtime/metrics"
)

// writeSteps prints a path's mean time per step, in the order an event
// takes them (nothing when none was measured).
func writeSteps(out io.Writer, label string, steps map[string]float64) {
	var parts []string
	for _, step := range metrics.Steps {
		if us, ok := steps[step]; ok {
			parts = append(parts, fmt.Sprintf("%s %.0f", step, us))
		}
	}
	if len(parts) > 0 {
		fmt.Fprintf(out, "%s (mean us per event; they overlap): %s\n", label, strings.Join(parts, ", "))
	}
}

// WriteTable renders the report as aligned human tables.
func (r *Report) WriteTable(out io.Writer) error {
	w := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	m := r.Machine
	fmt.Fprintf(w, "machine\t%d CPUs, %s, %.1f GiB RAM, Linux %s, %s, load1 %.2f at start\n", m.CPUs, m.CPUModel, m.MemTotalG, m.Kernel, m.GoVersion, m.Load1)
	fmt.Fprintf(w, "run\t%s, took %s\n", r.StartedAt.Format("2006-01-02 15:04:05Z"), r.Duration)
	w.Flush()
	if len(r.Push) > 0 {
		fmt.Fprintf(out, "\nPush path: signed POST /inbound/sentinel-<key> -> inbox message, beside raw JetStream and an HTTP relay (%d events each, %d warm-up, concurrency %d)\n",
			r.Options.Events, r.Options.Warmup, r.Options.Concurrency)
		fmt.Fprintln(w, "fsync\tpath\tevents/s\tp50 ms\tp90 ms\tp99 ms\tmax ms")
		for _, p := range r.Push {
			row := func(name string, x Path) {
				fmt.Fprintf(w, "%s\t%s\t%.0f\t%.3f\t%.3f\t%.3f\t%.3f\n", p.Fsync, name, x.EventsPerSec, x.Latency.P50Ms, x.Latency.P90Ms, x.Latency.P99Ms, x.Latency.MaxMs)
			}
			row("push (node)", p.Push)
			row("raw JetStream", p.Raw)
			row("HTTP relay", p.Relay)
			fmt.Fprintf(w, "%s\tpush/raw\t%.2fx\t%+.3f\t\t%+.3f\t\n", p.Fsync, p.Ratio, p.AddedP50Ms, p.AddedP99Ms)
			fmt.Fprintf(w, "%s\tpush/relay\t%.2fx\t%+.3f\t\t%+.3f\t\n", p.Fsync, p.RelayRatio, p.RelayAddedP50Ms, p.RelayAddedP99Ms)
		}
		w.Flush()
		for _, p := range r.Push {
			writeSteps(out, "node steps, fsync "+p.Fsync, p.StepsUs)
		}
	}
	if r.Cluster != nil {
		r.Cluster.writeTable(out, r.Options.Warmup)
	}
	if r.Poll != nil {
		fmt.Fprintln(out, "\nPoll path: cost per quiet PR")
		if n := r.Poll.Node; n != nil {
			fmt.Fprintf(w, "node share (tick over %d quiet fake sentinels, %d ticks)\t%.1f ms wall (median), %.1f ms CPU (mean)\t%.1f us wall, %.1f us CPU per sentinel\n",
				r.Options.Sentinels, n.Ticks, n.WallMs, n.CPUMs, n.WallPerSentinelUs, n.CPUPerSentinelUs)
		}
		g := r.Poll.LocalGH
		if g.Skipped != "" {
			fmt.Fprintf(w, "local-gh quiet poll (Go benchmark)\tskipped: %s\n", g.Skipped)
		} else {
			fmt.Fprintf(w, "local-gh quiet poll (Go benchmark, %d polls)\t%.0f us wall, %.0f us CPU (incl. fake GitHub)\t%.0f quota/poll, %.0f requests/poll (304)\n",
				g.N, g.Metrics["ns/op"]/1000, g.Metrics["cpu-ns/poll"]/1000, g.Metrics["quota/poll"], g.Metrics["requests/poll"])
		}
		if r.Poll.PerQuietPRUs > 0 {
			fmt.Fprintf(w, "total CPU per quiet PR poll\t%.0f us\t\n", r.Poll.PerQuietPRUs)
		}
		w.Flush()
		fmt.Fprintf(out, "Go benchmark: %s\n", g.Command)
	}
	if s := r.Scale; s != nil {
		fmt.Fprintf(out, "\nScale: %d sentinels on one node (%s, fsync=%s)\n", s.Sentinels, s.Mode, s.Fsync)
		fmt.Fprintf(w, "RSS empty / after create / after restart\t%.0f / %.0f / %.0f MiB\n", s.RSSBaseMiB, s.RSSAfterCreateMiB, s.RSSAfterRestartMiB)
		fmt.Fprintf(w, "create (POST /sentinels, %d clients)\t%.0f sentinels/s\n", s.CreateConcurrency, s.CreatesPerSec)
		fmt.Fprintf(w, "GET /sentinels (%d requests, %s)\tp50 %.1f ms, p90 %.1f ms, p99 %.1f ms, max %.1f ms\n", s.List.N, humanBytes(s.ListBytes), s.List.P50Ms, s.List.P90Ms, s.List.P99Ms, s.List.MaxMs)
		fmt.Fprintf(w, "GET /sentinels?limit=100 (%d pages)\tp50 %.2f ms, p90 %.2f ms, p99 %.2f ms, max %.2f ms\n", s.ListPage.N, s.ListPage.P50Ms, s.ListPage.P90Ms, s.ListPage.P99Ms, s.ListPage.MaxMs)
		fmt.Fprintf(w, "quiet poll tick (%d ticks)\t%.1f ms wall (median), %.1f ms CPU (mean)\n", s.QuietTick.Ticks, s.QuietTick.WallMs, s.QuietTick.CPUMs)
		fmt.Fprintf(w, "clean stop\t%.0f ms\n", s.StopMs)
		fmt.Fprintf(w, "restart to ready\t%.0f ms\n", s.RestartToReadyMs)
		w.Flush()
	}
	if r.Options.ScaleMode == "in-process" && r.Scale != nil {
		fmt.Fprintln(out, strings.TrimSpace(`
note: the scale node ran in-process, so RSS and CPU include the harness.`))
	}
	return nil
}

func humanBytes(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
