package cli

import (
	"errors"
	"fmt"
	"net/url"

	"github.com/spf13/cobra"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/api"
)

// replayHints name the fix for replay's node errors.
var replayHints = hints{
	sentinel.CodeParkedNotFound:   "list the parked records and their ids with `sentinel parked`",
	sentinel.CodePostMortem:       "the subject closed before this event; pass --force to deliver it anyway",
	sentinel.CodeNotReplayable:    "only parked sentinel events can be replayed",
	sentinel.CodeSentinelNotFound: "the sentinel was removed; its parked events have nowhere to go",
}

// ReplayOptions are the options of `sentinel parked replay`.
type ReplayOptions struct {
	ClientOptions
	ParkID   string
	Sentinel string
	Force    bool
}

// NewCmdParkedReplay builds `sentinel parked replay (<park-id> | --sentinel <id>)`.
func NewCmdParkedReplay(io IO, runF func(*ReplayOptions) error) *cobra.Command {
	opts := &ReplayOptions{}
	cmd := &cobra.Command{
		Use:   "replay (<park-id> | --sentinel <id>)",
		Short: "Re-run parked events through the pipeline to their sentinel's current target",
		Long: `Replay parked events: each goes through the pipeline again, to its sentinel's
current target (dead-target routing applies: a target still dead parks it again).
A non-terminal event on a subject that already closed (post-mortem) is refused
unless --force. Replaying twice delivers once.`,
		Example: `  sentinel parked replay prk_42
  sentinel parked replay --sentinel sen_01J... --force`,
		Args: func(_ *cobra.Command, args []string) error {
			switch {
			case len(args) == 1 && opts.Sentinel == "", len(args) == 0 && opts.Sentinel != "":
				return nil
			}
			return usageError("give one parked record id (see `sentinel parked`) or --sentinel <id>")
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ClientOptions = newClientOptions(io, cmd)
			opts.JSON = jsonFlag(cmd)
			if len(args) == 1 {
				opts.ParkID = args[0]
			}
			if runF != nil {
				return runF(opts)
			}
			return replayRun(cmd, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Sentinel, "sentinel", "", "replay every parked event of this sentinel")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "deliver post-mortem events too (events after their subject closed)")
	addClientFlags(cmd)
	return cmd
}

func replayPath(id string, force bool) string {
	p := "/parked/" + url.PathEscape(id) + "/replay"
	if force {
		p += "?force=true"
	}
	return p
}

func replayRun(cmd *cobra.Command, opts *ReplayOptions) error {
	if opts.ParkID != "" {
		var out struct {
			Replay api.Replay `json:"replay"`
		}
		if printed, err := opts.call(cmd.Context(), "POST", replayPath(opts.ParkID, opts.Force), nil, &out, replayHints); err != nil || printed {
			return err
		}
		printReplays(&opts.ClientOptions, []api.Replay{out.Replay}, nil)
		return nil
	}
	// Every parked event of one sentinel: list, then replay each.
	list := opts.ClientOptions
	list.JSON = false
	var parked struct {
		Parked []api.Parked `json:"parked"`
	}
	if _, err := list.call(cmd.Context(), "GET", "/parked?limit=1000&sentinel="+url.QueryEscape(opts.Sentinel), nil, &parked, replayHints); err != nil {
		return err
	}
	var done []api.Replay
	var failed []string
	for _, p := range parked.Parked {
		if p.Event == nil || p.ID == "" {
			continue
		}
		var out struct {
			Replay api.Replay `json:"replay"`
		}
		if _, err := list.call(cmd.Context(), "POST", replayPath(p.ID, opts.Force), nil, &out, replayHints); err != nil {
			var x *ExitError
			if !errors.As(err, &x) || x.Code == api.ExitUnavailable || x.Code == api.ExitAuth {
				return err
			}
			failed = append(failed, fmt.Sprintf("%s (%s): %v", p.ID, p.Event.ID, err))
			continue
		}
		done = append(done, out.Replay)
	}
	if opts.JSON {
		if done == nil {
			done = []api.Replay{}
		}
		if failed == nil {
			failed = []string{}
		}
		opts.printJSON(map[string]any{"ok": len(failed) == 0, "replays": done, "failed": failed})
	} else {
		printReplays(&opts.ClientOptions, done, failed)
	}
	if len(failed) > 0 {
		return &ExitError{Code: api.ExitInvalid, Err: fmt.Errorf("%d of %d parked events were not replayed", len(failed), len(failed)+len(done))}
	}
	return nil
}

func printReplays(o *ClientOptions, done []api.Replay, failed []string) {
	if len(done) == 0 && len(failed) == 0 {
		fmt.Fprintln(o.IO.Out, "No parked events to replay.")
		return
	}
	if len(done) > 0 {
		w := o.table()
		row(w, "PARK ID", "SENTINEL", "EVENT", "DECISION", "WHY / WHERE")
		for _, r := range done {
			where := r.Reason
			if r.Session != "" {
				where += " → " + r.Session + " (" + r.MessageID + ")"
			}
			row(w, r.ParkID, r.SentinelID, r.EventID, r.Decision, where)
		}
		_ = w.Flush()
	}
	for _, f := range failed {
		fmt.Fprintln(o.IO.ErrOut, "not replayed: "+f)
	}
}
