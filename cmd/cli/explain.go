package cli

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/api"
	"github.com/agentproto/sentinel/ingress/apiclient"
)

// explainHints name the fix for explain's node errors.
var explainHints = hints{
	sentinel.CodeSentinelNotFound: "list the ids with `sentinel list`",
	sentinel.CodeEventNotFound:    "the journal keeps decisions for journal.max_age (default 7 days); list recent event ids with `sentinel explain <sentinel-id>`",
}

// ExplainOptions are the options of `sentinel explain`.
type ExplainOptions struct {
	ClientOptions
	SentinelID string
	EventID    string
	Limit      int
}

// NewCmdExplain builds `sentinel explain <sentinel-id> [<event-id>]`.
func NewCmdExplain(io IO) *cobra.Command {
	opts := &ExplainOptions{}
	cmd := &cobra.Command{
		Use:   "explain <sentinel-id> [<event-id>]",
		Short: "Explain what the node did with a sentinel's events, or the whole story of one event",
		Long: `Read the decision journal.

  sentinel explain <sentinel-id>
      the sentinel's recent decisions: delivered (to which session, which
      message), filtered (which clause failed, on the subject or the type),
      duplicate, post-mortem, dead-target, retrying (the error), self...
  sentinel explain <sentinel-id> <event-id>
      the event's story: when it was received, from which provider, and
      every decision about it (this sentinel's first, then the others').`,
		Example: `  sentinel explain sen_01J... 
  sentinel explain sen_01J... evt_5f2c... --json`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) < 1 || len(args) > 2 {
				return usageError("give a sentinel id (see `sentinel list`) and optionally an event id")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ClientOptions = newClientOptions(io, cmd)
			opts.JSON = jsonFlag(cmd)
			opts.SentinelID = args[0]
			if len(args) == 2 {
				opts.EventID = args[1]
			}
			return explainRun(cmd, opts)
		},
	}
	cmd.Flags().IntVar(&opts.Limit, "limit", 20, "at most this many recent decisions (1..1000)")
	addClientFlags(cmd)
	return cmd
}

func explainRun(cmd *cobra.Command, opts *ExplainOptions) error {
	if opts.Limit < 1 || opts.Limit > 1000 {
		return usageError("--limit must be within 1..1000 (got %d)", opts.Limit)
	}
	if opts.EventID != "" {
		return explainEvent(cmd, opts)
	}
	var out sentinel.DecisionPage
	if printed, err := opts.send(explainHints, func(c *apiclient.Client) (err error) {
		out, err = apiclient.Explainer{C: c}.Decisions(cmd.Context(), opts.SentinelID, opts.Limit, 0)
		return err
	}); err != nil || printed {
		return err
	}
	if len(out.Decisions) == 0 {
		fmt.Fprintf(opts.IO.Out, "No decisions journaled for %s yet (the journal keeps journal.max_age, default 7 days).\n", opts.SentinelID)
		return nil
	}
	fmt.Fprintf(opts.IO.Out, "Recent decisions of %s (oldest first):\n", opts.SentinelID)
	w := opts.table()
	row(w, "TIME", "DECISION", "EVENT", "TYPE", "SUBJECT", "WHY / WHERE")
	for _, d := range out.Decisions {
		row(w, isoTime(d.Ts), d.Decision, d.EventID, d.Type, d.Subject, clip(why(d), 80))
	}
	return w.Flush()
}

func explainEvent(cmd *cobra.Command, opts *ExplainOptions) error {
	var st api.EventStory
	if printed, err := opts.send(explainHints, func(c *apiclient.Client) (err error) {
		st, err = apiclient.Explainer{C: c}.Event(cmd.Context(), opts.EventID)
		return err
	}); err != nil || printed {
		return err
	}
	opts.kv(
		"event", st.EventID,
		"type", st.Type,
		"subject", st.Subject,
		"summary", clip(st.Summary, 100),
		"event time", isoTime(st.Time),
		"received", isoTime(st.Received),
		"provider", st.Provider,
		"source", st.Source,
	)
	// This sentinel's decisions first, then the others'.
	var mine, others []sentinel.Decision
	for _, d := range st.Decisions {
		if d.SentinelID == opts.SentinelID {
			mine = append(mine, d)
		} else {
			others = append(others, d)
		}
	}
	if len(mine) == 0 {
		fmt.Fprintf(opts.IO.Out, "\n%s made no decision about this event.\n", opts.SentinelID)
	}
	fmt.Fprintln(opts.IO.Out)
	w := opts.table()
	row(w, "TIME", "SENTINEL", "DECISION", "WHY / WHERE", "NODE")
	for _, d := range append(mine, others...) {
		row(w, isoTime(d.Ts), d.SentinelID, d.Decision, clip(why(d), 100), d.Node)
	}
	return w.Flush()
}

// why renders a decision's reason and where it went.
func why(d sentinel.Decision) string {
	var parts []string
	if d.Reason != "" {
		parts = append(parts, d.Reason)
	}
	if d.Session != "" {
		parts = append(parts, "→ "+d.Session+" ("+d.MessageID+")")
	}
	if d.Attempt > 0 {
		parts = append(parts, "attempt "+strconv.Itoa(d.Attempt))
	}
	return strings.Join(parts, " ")
}
