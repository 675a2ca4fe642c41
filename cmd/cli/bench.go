package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentproto/sentinel/ingress/api"
	"github.com/agentproto/sentinel/tools/bench"
)

// newBenchCmd builds `sentinel bench`: a thin front of tools/bench.
func newBenchCmd(io IO) *cobra.Command {
	d := bench.DefaultOptions()
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Benchmark the push path, the poll path and 10,000 sentinels on nodes of its own",
		Long: `Run the benchmark harness. It starts its own nodes on temporary homes (the
test-only fake provider enabled; your node and home are not touched) and
measures, in one run:

  push   a signed POST /inbound/sentinel-<key> until the inbox message is
         stored, throughput and p50/p99 latency, beside a raw JetStream chain
         (publish, consume, publish, ack) on the same server; at the node's
         fsync setting (AGENTPROTO_NATS_SYNC_ALWAYS, default always) or --fsync
  scale  --sentinels sentinels on one node (this binary as a child process):
         creation rate, RSS, GET /sentinels p50/p99, a quiet poll tick,
         restart-to-ready time
  poll   the cost of polling one quiet PR: the node's share (the quiet tick
         of the scale phase, per sentinel) plus local-gh's own conditional
         requests (the Go benchmark BenchmarkQuietPoll, run with go test when
         this is run inside the source tree with go and gh on PATH)
  cluster  with --cluster 3: first --boots times (default 20) boot-to-ready
         of three nodes started together, on fresh homes (a first boot) and
         again on the same homes (a later boot), min/median/max; then three
         ` + "`sentinel serve`" + ` processes of this binary
         clustered on loopback (every stream R3): the push path round-robin
         over the nodes beside raw JetStream R3 on the same servers (--events,
         --warmup, --concurrency), then failover: --kills times, SIGKILL of
         the node leading the events stream, timed to the next push a
         surviving node accepts; the node is restarted between kills; with
         --cluster-sentinels N, N sentinels over fresh nodes last (create
         rate, quiet tick, restart of every node, RSS per node)

It prints tables, or the whole report with --json. Exit 0 on success, 1 on
a failed phase, 2 on bad flags.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f := cmd.Flags()
			o := d
			o.Events, _ = f.GetInt("events")
			o.Warmup, _ = f.GetInt("warmup")
			o.Concurrency, _ = f.GetInt("concurrency")
			o.Partitions, _ = f.GetInt("partitions")
			o.Sentinels, _ = f.GetInt("sentinels")
			o.CreateConcurrency, _ = f.GetInt("create-concurrency")
			o.ListRequests, _ = f.GetInt("list-requests")
			o.Ticks, _ = f.GetInt("ticks")
			o.GoBench, _ = f.GetBool("go-bench")
			o.GoBenchTime, _ = f.GetString("go-benchtime")
			o.Dir, _ = f.GetString("dir")
			o.Cluster, _ = f.GetInt("cluster")
			o.Kills, _ = f.GetInt("kills")
			o.Boots, _ = f.GetInt("boots")
			o.ClusterSentinels, _ = f.GetInt("cluster-sentinels")
			asJSON, _ := f.GetBool("json")
			inProcess, _ := f.GetBool("in-process")
			skip, _ := f.GetStringSlice("skip")
			o.Skip = map[string]bool{}
			for _, s := range skip {
				s = strings.ToLower(strings.TrimSpace(s))
				if s != "push" && s != "poll" && s != "scale" {
					return &ExitError{Code: api.ExitUsage, Err: fmt.Errorf("--skip %q: phases are push, poll and scale", s)}
				}
				o.Skip[s] = true
			}
			fs, _ := f.GetString("fsync")
			switch strings.ToLower(fs) {
			case "", "node":
				cfg, err := LoadConfig(cmd, nil)
				if err != nil {
					return &ExitError{Code: api.ExitUsage, Err: err}
				}
				o.Fsync = []bool{cfg.NATS.SyncAlways}
			case "always":
				o.Fsync = []bool{true}
			case "default", "never", "off":
				o.Fsync = []bool{false}
			case "both":
				o.Fsync = []bool{true, false}
			default:
				return &ExitError{Code: api.ExitUsage, Err: fmt.Errorf("--fsync %q: use node, always, default or both", fs)}
			}
			if o.Cluster != 0 && o.Cluster < 3 {
				return &ExitError{Code: api.ExitUsage, Err: fmt.Errorf("--cluster %d: the cluster phase needs at least 3 nodes (streams are R3)", o.Cluster)}
			}
			if o.Cluster > 0 && inProcess {
				return &ExitError{Code: api.ExitUsage, Err: errors.New("--cluster runs this binary's serve as child processes: drop --in-process")}
			}
			if o.Kills < 0 {
				return &ExitError{Code: api.ExitUsage, Err: fmt.Errorf("--kills %d: give 0 or more", o.Kills)}
			}
			if o.Boots < 0 {
				return &ExitError{Code: api.ExitUsage, Err: fmt.Errorf("--boots %d: give 0 or more", o.Boots)}
			}
			if o.ClusterSentinels < 0 || (o.ClusterSentinels > 0 && o.Cluster == 0) {
				return &ExitError{Code: api.ExitUsage, Err: fmt.Errorf("--cluster-sentinels %d: give 0 or more, with --cluster", o.ClusterSentinels)}
			}
			if !inProcess {
				exe, err := os.Executable()
				if err != nil {
					return &ExitError{Code: api.ExitError, Err: fmt.Errorf("find this binary for the scale node (or pass --in-process): %w", err)}
				}
				o.Binary = exe
			}
			o.Progress = func(format string, args ...any) { fmt.Fprintf(io.ErrOut, "bench: "+format+"\n", args...) }
			rep, err := bench.Run(cmd.Context(), o)
			if err != nil {
				return &ExitError{Code: api.ExitError, Err: err}
			}
			if asJSON {
				enc := json.NewEncoder(io.Out)
				enc.SetIndent("", "  ")
				return enc.Encode(rep)
			}
			return rep.WriteTable(io.Out)
		},
	}
	f := cmd.Flags()
	f.Int("events", d.Events, "measured events per push path and fsync setting")
	f.Int("warmup", d.Warmup, "unmeasured warm-up events per path")
	f.Int("concurrency", d.Concurrency, "concurrent push senders (each its own sentinel and session, one event in flight)")
	f.Int("partitions", 0, "event partitions of the push phase's node (0: the node's default, 16); more than the senders leaves none queued behind another sentinel's event")
	f.String("fsync", "node", "fsync setting of the nodes: node (this node's setting), always, default, or both (push phase twice)")
	f.Int("sentinels", d.Sentinels, "sentinels created in the scale phase")
	f.Int("create-concurrency", d.CreateConcurrency, "concurrent POST /sentinels clients in the scale phase")
	f.Int("list-requests", d.ListRequests, "timed GET /sentinels requests in the scale phase")
	f.Int("ticks", d.Ticks, "timed quiet poll ticks in the scale phase")
	f.Bool("go-bench", d.GoBench, "run the local-gh quiet-poll Go benchmark (a binary built with -tags gobench only; needs the source tree, go and gh)")
	f.String("go-benchtime", d.GoBenchTime, "-benchtime of the Go benchmark")
	f.Bool("in-process", false, "run the scale node in this process instead of a child process (RSS then includes the harness)")
	f.StringSlice("skip", nil, "phases to skip: push, poll, scale")
	f.Int("cluster", 0, "run the cluster phase on this many local clustered nodes (3 or more; 0: no cluster phase)")
	f.Int("kills", d.Kills, "failovers timed in the cluster phase (SIGKILL of the events stream's leader)")
	f.Int("cluster-sentinels", 0, "sentinels spread over fresh cluster nodes at the end of the cluster phase: create rate, quiet tick, restart of every node, RSS per node (0: none)")
	f.Int("boots", d.Boots, "boot rounds timed in the cluster phase, each a first boot on fresh homes and a later boot on the same homes (0: none)")
	f.String("dir", "", "folder for the temporary node homes (default the system temp folder)")
	f.Bool("json", false, "print the whole report as JSON")
	return cmd
}
