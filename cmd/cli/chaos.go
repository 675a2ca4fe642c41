package cli

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentproto/sentinel/ingress/api"
	"github.com/agentproto/sentinel/tools/chaos"
)

// newChaosCmd builds `sentinel chaos`: a thin front of tools/chaos.
func newChaosCmd(io IO) *cobra.Command {
	d := chaos.DefaultOptions()
	cmd := &cobra.Command{
		Use:   "chaos",
		Short: "Run a workload against a cluster while faults are injected, then check every event was delivered exactly once, in order",
		Long: `Run the reliability check. By default it starts three clustered
` + "`sentinel serve`" + ` processes of this binary on free loopback ports, in a
temporary folder (the test-only fake provider enabled; your node and home
are not touched), and removes them at the end. With --compose it runs
against a running compose project instead (see docs/RELIABILITY.md).

The workload: signed pushes (POST /inbound/sentinel-<key>, each sender moving
to the next node on a connection error, a timeout, a 503 or a 500, as a
load balancer would) and fake-provider polls of a feed file, over several
sentinels and sessions; every event has a unique id.

The nemesis injects faults on a schedule drawn from --seed (the same seed
gives the same schedule, printed first), one node at a time: kill (SIGKILL,
then start), pause (SIGSTOP for longer than bus.ack_wait, then SIGCONT),
restart (graceful), and with --compose partition (docker network
disconnect, then connect).

The workload runs for --duration (longer only while the last fault heals);
then, after a settle period (bounded by --settle), it reads every session's
inbox and classifies every event: ok (exactly once), lost,
duplicated, unexpected, indeterminate (its answer was lost: once or never
is fine), reordered (per sentinel, among sends made one after another);
and the recovery after each fault.

It prints a table, or the report with --json. Exit 0 when the verdict is
valid, 1 on any lost, duplicated, unexpected or reordered event or a run
that could not be carried out, 2 on bad flags.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f := cmd.Flags()
			o := d
			var err error
			if f.Changed("seed") {
				o.Seed, _ = f.GetUint64("seed")
			} else if o.Seed, err = randomSeed(); err != nil {
				return &ExitError{Code: api.ExitError, Err: err}
			}
			o.Duration, _ = f.GetDuration("duration")
			o.Settle, _ = f.GetDuration("settle")
			o.Sessions, _ = f.GetInt("sessions")
			o.PushSentinels, _ = f.GetInt("push-sentinels")
			o.PollSentinels, _ = f.GetInt("poll-sentinels")
			o.Interval, _ = f.GetDuration("interval")
			o.AckWait, _ = f.GetDuration("ack-wait")
			kinds, _ := f.GetStringSlice("faults")
			for _, k := range kinds {
				kind, err := chaos.ParseKind(k)
				if err != nil {
					return &ExitError{Code: api.ExitUsage, Err: fmt.Errorf("--faults: %w", err)}
				}
				o.Kinds = append(o.Kinds, kind)
			}
			project, _ := f.GetString("compose")
			if project != "" && !f.Changed("ack-wait") {
				// The compose nodes run with the node default.
				o.AckWait = composeAckWait
			}
			if err := o.Validate(); err != nil {
				return &ExitError{Code: api.ExitUsage, Err: err}
			}
			planOnly, _ := f.GetBool("plan")
			asJSON, _ := f.GetBool("json")
			dir, _ := f.GetString("dir")
			began := time.Now()
			progress := func(format string, args ...any) {
				fmt.Fprintf(io.ErrOut, "chaos: %6.1fs "+format+"\n", append([]any{time.Since(began).Seconds()}, args...)...)
			}
			o.Progress = progress

			if planOnly {
				kinds := o.Kinds
				if len(kinds) == 0 {
					kinds = chaos.LocalKinds
					if project != "" {
						kinds = chaos.ComposeKinds
					}
				}
				return chaos.WriteSchedule(io.Out, o.Seed, chaos.PlanFor(o, 3, kinds), nil)
			}
			t, err := startChaosTarget(cmd.Context(), project, dir, o, progress)
			if err != nil {
				return &ExitError{Code: api.ExitError, Err: err}
			}
			defer func() {
				t.Close()
				progress("done")
			}()
			plan := chaos.PlanFor(o, len(t.Names()), firstNonEmpty(o.Kinds, t.Kinds()))
			if err := chaos.WriteSchedule(io.ErrOut, o.Seed, plan, t.Names()); err != nil {
				return err
			}
			rep, err := chaos.Run(cmd.Context(), t, o)
			if err != nil {
				if rep != nil && !errors.Is(err, context.Canceled) {
					err = fmt.Errorf("%w%s", err, logsTail(t.Logs()))
				}
				return &ExitError{Code: api.ExitError, Err: err}
			}
			if asJSON {
				enc := json.NewEncoder(io.Out)
				enc.SetIndent("", "  ")
				if err := enc.Encode(rep); err != nil {
					return err
				}
			} else if err := rep.WriteTable(io.Out); err != nil {
				return err
			}
			if !rep.Verdict.Valid {
				return &ExitError{Code: api.ExitError, Err: errors.New("chaos: the verdict is invalid (see the findings)")}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.Uint64("seed", 0, "seed of the fault schedule (default: a random one, printed)")
	f.Duration("duration", d.Duration, "how long the workload runs and the span the fault schedule is drawn over")
	f.Duration("settle", d.Settle, "at most this long after the workload for every accepted event to reach its inbox")
	f.StringSlice("faults", nil, "fault kinds to draw: kill, pause, restart, partition (default: every kind the target supports)")
	f.Int("sessions", d.Sessions, "sessions the sentinels deliver to")
	f.Int("push-sentinels", d.PushSentinels, "sentinels fed by signed pushes (one sender each, one event in flight)")
	f.Int("poll-sentinels", d.PollSentinels, "sentinels fed by fake-provider polls of the feed file (local target only)")
	f.Duration("interval", d.Interval, "pause between one push sender's events")
	f.Duration("ack-wait", d.AckWait, "bus.ack_wait of the nodes, which a pause outlasts: the local nodes are started with it; with --compose give the project's (default there: 10s, the node default)")
	f.String("compose", "", "run against this running compose project instead of local processes")
	f.Bool("plan", false, "print the fault schedule of --seed and exit")
	f.String("dir", "", "folder for the local nodes' temporary homes (default the system temp folder)")
	f.Bool("json", false, "print the report as JSON")
	return cmd
}

// composeAckWait is bus.ack_wait's default, which the shipped compose
// file keeps.
const composeAckWait = 10 * time.Second

// startChaosTarget starts the local nodes, or attaches to the compose
// project.
func startChaosTarget(ctx context.Context, project, dir string, o chaos.Options, progress func(string, ...any)) (chaos.Target, error) {
	if project != "" {
		progress("attaching to the compose project %s", project)
		return chaos.AttachCompose(ctx, chaos.ComposeOptions{Project: project})
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find this binary to run its serve: %w", err)
	}
	progress("starting 3 local nodes")
	return chaos.StartLocal(ctx, chaos.LocalOptions{Binary: exe, Dir: dir, Nodes: 3, AckWait: o.AckWait,
		MemberTTL: 2 * time.Second, LeaseTTL: 3 * time.Second, PollInterval: time.Second})
}

func firstNonEmpty(a, b []chaos.Kind) []chaos.Kind {
	if len(a) > 0 {
		return a
	}
	return b
}

func randomSeed() (uint64, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return 0, fmt.Errorf("draw a seed: %w", err)
	}
	return binary.BigEndian.Uint64(b[:]) >> 11, nil // fits a JSON number exactly
}

// logsTail is the end of the nodes' logs for an error, on its own lines.
func logsTail(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	return "\n" + s
}
