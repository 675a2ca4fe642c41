package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Options sizes a run. Zero values take the defaults of DefaultOptions.
type Options struct {
	// Events is the number of measured events per path (push and raw) and
	// fsync setting; Warmup events run first on each and are not measured.
	Events int
	Warmup int
	// Concurrency is the number of concurrent senders, each with its own
	// sentinel and session, each sending one event at a time.
	Concurrency int
	// Partitions, when set, is the push phase node's event partition count
	// (bus.partitions; 0: the node's default): with few partitions the
	// senders' sentinels share them and queue behind each other.
	Partitions int
	// Fsync lists the fsync settings of the push phase (true: fsync every
	// write). The scale phase uses the first.
	Fsync []bool
	// Sentinels is the scale phase's sentinel count; CreateConcurrency the
	// number of concurrent POST /sentinels clients; ListRequests the number
	// of timed GET /sentinels; Ticks the number of timed quiet poll ticks.
	Sentinels         int
	CreateConcurrency int
	ListRequests      int
	Ticks             int
	// Binary, when set, is a sentinel binary the scale phase runs as a
	// child process (RSS and CPU of the node alone); otherwise the node
	// runs in-process.
	Binary string
	// GoBench runs the local-gh quiet-poll Go benchmark (built with the
	// gobench tag only: gobench.go; needs the source
	// tree, the go tool and gh); GoBenchTime is its -benchtime.
	GoBench     bool
	GoBenchTime string
	// Cluster, when 3 or more, runs the cluster phase on that many
	// `sentinel serve` processes of Binary (clustered on loopback, every
	// stream R3): the push path round-robin over the nodes beside raw
	// JetStream R3 on the same servers (Events, Warmup, Concurrency, the
	// first Fsync), then Kills SIGKILLs of the events stream's leader.
	// 0 skips it.
	Cluster int
	Kills   int
	// ClusterSentinels, when positive, ends the cluster phase with that
	// many sentinels created over its nodes (CreateConcurrency clients,
	// Ticks quiet ticks, a restart of every node: ClusterScaleResult).
	ClusterSentinels int
	// Boots is the number of boot rounds of the cluster phase, each a
	// first boot on fresh homes and a later boot on the same homes
	// (BootResult); 0 skips them.
	Boots int
	// Skip names phases not to run: "push", "poll", "scale".
	Skip map[string]bool
	// Dir is where temporary homes go (default os.TempDir()); they are
	// removed at the end.
	Dir string
	// Progress, when set, receives progress lines.
	Progress func(format string, args ...any)
}

// DefaultOptions are the sizes of the figures in BENCHMARKS.md.
func DefaultOptions() Options {
	return Options{Events: 2000, Warmup: 200, Concurrency: 1, Fsync: []bool{true}, Sentinels: 10000,
		CreateConcurrency: 4, ListRequests: 100, Ticks: 10, GoBench: true, GoBenchTime: "2s", Kills: 5, Boots: 20}
}

func (o Options) withDefaults() Options {
	d := DefaultOptions()
	if o.Events <= 0 {
		o.Events = d.Events
	}
	if o.Warmup < 0 {
		o.Warmup = 0
	}
	if o.Concurrency <= 0 {
		o.Concurrency = d.Concurrency
	}
	if len(o.Fsync) == 0 {
		o.Fsync = d.Fsync
	}
	if o.Sentinels <= 0 {
		o.Sentinels = d.Sentinels
	}
	if o.CreateConcurrency <= 0 {
		o.CreateConcurrency = d.CreateConcurrency
	}
	if o.ListRequests <= 0 {
		o.ListRequests = d.ListRequests
	}
	if o.Ticks <= 0 {
		o.Ticks = d.Ticks
	}
	if o.Kills < 0 {
		o.Kills = 0
	}
	if o.Boots < 0 {
		o.Boots = 0
	}
	if o.ClusterSentinels < 0 {
		o.ClusterSentinels = 0
	}
	if o.GoBenchTime == "" {
		o.GoBenchTime = d.GoBenchTime
	}
	if o.Progress == nil {
		o.Progress = func(string, ...any) {}
	}
	return o
}

func (o Options) scaleFsync() bool { return o.Fsync[0] }

func (o Options) clusterFsync() bool { return o.Fsync[0] }

// Report is the outcome of one run.
type Report struct {
	StartedAt time.Time `json:"startedAt"`
	Duration  string    `json:"duration"`
	Machine   Machine   `json:"machine"`
	Options   struct {
		Events            int    `json:"events"`
		Warmup            int    `json:"warmup"`
		Concurrency       int    `json:"concurrency"`
		Partitions        int    `json:"partitions,omitempty"`
		Sentinels         int    `json:"sentinels"`
		CreateConcurrency int    `json:"createConcurrency"`
		ListRequests      int    `json:"listRequests"`
		Ticks             int    `json:"ticks"`
		ScaleMode         string `json:"scaleMode"`
		Cluster           int    `json:"cluster,omitempty"`
		Kills             int    `json:"kills,omitempty"`
		ClusterSentinels  int    `json:"clusterSentinels,omitempty"`
		Boots             int    `json:"boots,omitempty"`
	} `json:"options"`
	Push    []PushResult   `json:"push,omitempty"`
	Cluster *ClusterResult `json:"cluster,omitempty"`
	Poll    *PollResult    `json:"poll,omitempty"`
	Scale   *ScaleResult   `json:"scale,omitempty"`
}

// PollResult is the poll path's cost per quiet PR: the node's share (a
// tick over quiet fake sentinels, from the scale phase) and the local-gh
// provider's own quiet poll (Go benchmark).
type PollResult struct {
	// Node is the quiet tick over the scale phase's sentinels.
	Node *TickCost `json:"node,omitempty"`
	// LocalGH is BenchmarkQuietPoll/localgh-inprocess.
	LocalGH GoBenchResult `json:"localGh"`
	// PerQuietPRUs is Node CPU per sentinel plus local-gh cpu-ns/poll, in
	// microseconds (0 when either is missing).
	PerQuietPRUs float64 `json:"perQuietPrUs,omitempty"`
}

// Run runs every phase not skipped and returns the report. Each phase
// starts its own node(s) on a fresh temporary home.
func Run(ctx context.Context, o Options) (*Report, error) {
	o = o.withDefaults()
	rep := &Report{StartedAt: time.Now().UTC(), Machine: describeMachine()}
	rep.Options.Events, rep.Options.Warmup, rep.Options.Concurrency = o.Events, o.Warmup, o.Concurrency
	rep.Options.Partitions = o.Partitions
	rep.Options.Sentinels, rep.Options.CreateConcurrency, rep.Options.ListRequests, rep.Options.Ticks = o.Sentinels, o.CreateConcurrency, o.ListRequests, o.Ticks
	rep.Options.ScaleMode = "in-process"
	if o.Cluster > 0 {
		rep.Options.Cluster, rep.Options.Kills, rep.Options.Boots = o.Cluster, o.Kills, o.Boots
		rep.Options.ClusterSentinels = o.ClusterSentinels
	}
	if o.Binary != "" {
		rep.Options.ScaleMode = "binary"
	}
	root, err := os.MkdirTemp(o.Dir, "sentinel-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(root)
	t0 := time.Now()

	if !o.Skip["push"] {
		for i, fsync := range o.Fsync {
			o.Progress("push: fsync=%s, %d events x 2 paths, concurrency %d", fsyncName(fsync), o.Events, o.Concurrency)
			n, err := startInProcess(ctx, filepath.Join(root, fmt.Sprintf("push-%d", i)), fsync, o.Partitions)
			if err != nil {
				return rep, fmt.Errorf("push: start node: %w", err)
			}
			res, err := runPush(ctx, n, o)
			serr := n.stop(context.Background())
			if err != nil {
				return rep, fmt.Errorf("push (fsync=%s): %w", fsyncName(fsync), err)
			}
			if serr != nil {
				o.Progress("push: stopping the node: %v", serr)
			}
			rep.Push = append(rep.Push, res)
		}
	}
	if o.Cluster > 0 {
		res, err := runCluster(ctx, root, o)
		if err != nil {
			return rep, fmt.Errorf("cluster: %w", err)
		}
		rep.Cluster = &res
	}
	if !o.Skip["scale"] {
		res, err := runScale(ctx, filepath.Join(root, "scale"), o, o.Progress)
		if err != nil {
			return rep, fmt.Errorf("scale: %w", err)
		}
		rep.Scale = &res
	}
	if !o.Skip["poll"] {
		p := &PollResult{}
		if rep.Scale != nil {
			tc := rep.Scale.QuietTick
			p.Node = &tc
		}
		if o.GoBench {
			o.Progress("poll: go test -bench %s (-benchtime %s)", QuietPollBench, o.GoBenchTime)
			p.LocalGH = runQuietPollBench(ctx, o.GoBenchTime)
		} else {
			p.LocalGH = GoBenchResult{Name: QuietPollBench, Skipped: "disabled (--go-bench=false)"}
		}
		if p.Node != nil && p.LocalGH.Metrics != nil {
			p.PerQuietPRUs = p.Node.CPUPerSentinelUs + p.LocalGH.Metrics["cpu-ns/poll"]/1000
		}
		rep.Poll = p
	}
	if ctx.Err() != nil {
		return rep, ctx.Err()
	}
	if len(rep.Push) == 0 && rep.Cluster == nil && rep.Scale == nil && rep.Poll == nil {
		return rep, errors.New("every phase was skipped")
	}
	rep.Duration = time.Since(t0).Round(time.Millisecond).String()
	return rep, nil
}
