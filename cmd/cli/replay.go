package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/api"
	"github.com/agentproto/sentinel/ingress/apiclient"
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
func NewCmdParkedReplay(io IO) *cobra.Command {
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
			return replayRun(cmd, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Sentinel, "sentinel", "", "replay every parked event of this sentinel")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "deliver post-mortem events too (events after their subject closed)")
	addClientFlags(cmd)
	return cmd
}

func replayRun(cmd *cobra.Command, opts *ReplayOptions) error {
	if opts.ParkID != "" {
		var r api.Replay
		if printed, err := opts.send(replayHints, func(c *apiclient.Client) (err error) {
			r, err = apiclient.Explainer{C: c}.Replay(cmd.Context(), opts.ParkID, opts.Force)
			return err
		}); err != nil || printed {
			return err
		}
		printReplays(&opts.ClientOptions, []api.Replay{r}, nil)
		return nil
	}
	// Every parked event of one sentinel: list, then replay each.
	list := opts.ClientOptions
	list.JSON = false
	var parked []sentinel.Parked
	if _, err := list.send(replayHints, func(c *apiclient.Client) (err error) {
		parked, err = apiclient.Sentinels{C: c}.Parked(cmd.Context(), opts.Sentinel, 1000)
		return err
	}); err != nil {
		return err
	}
	var done []api.Replay
	var failed []string
	for _, p := range parked {
		if p.Event == nil || p.ID == "" {
			continue
		}
		var r api.Replay
		if _, err := list.send(replayHints, func(c *apiclient.Client) (err error) {
			r, err = apiclient.Explainer{C: c}.Replay(cmd.Context(), p.ID, opts.Force)
			return err
		}); err != nil {
			var x *ExitError
			if !errors.As(err, &x) || x.Code == api.ExitUnavailable || x.Code == api.ExitAuth {
				return err
			}
			failed = append(failed, fmt.Sprintf("%s (%s): %v", p.ID, p.Event.ID, err))
			continue
		}
		done = append(done, r)
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
