package cli

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/api"
	"github.com/agentproto/sentinel/ingress/apiclient"
)

// sentinelHints name the fix for the sentinel verbs' node errors.
var sentinelHints = hints{
	sentinel.CodeSentinelNotFound: "list the ids with `sentinel list`",
	sentinel.CodeNoCallerIdentity: "pass --session <id> or set " + EnvSession,
	sentinel.CodeUnknownProvider:  "list the providers with `sentinel adapters`",
	sentinel.CodeProviderNotReady: "see `sentinel adapters` for what the provider needs",
	sentinel.CodeInvalidPRURL:     "give a URL like https://github.com/owner/repo/pull/12",
	sentinel.CodeMissingSubject:   "give a subject like github:owner/repo#12, or `watch pr <url>`",
	sentinel.CodeSessionNotAlive:  "the target session has ended; register it again or pick another with --session",
}

// WatchOptions are the options of `sentinel watch`.
type WatchOptions struct {
	ClientOptions
	PRURL    string
	Subject  string
	Session  string
	Urgency  string
	Until    string
	Provider string
	Types    []string
	Group    string
	Label    string
	DryRun   bool
	MuteSelf *bool
	// Key and AllowDuplicate: WatchRequest.Key and .AllowDuplicate.
	Key            string
	AllowDuplicate bool
	// Batch is the digest window (WatchRequest.BatchMs), 0 for none.
	Batch time.Duration
}

// NewCmdWatch builds `sentinel watch pr <url>` / `sentinel watch <subject>`.
func NewCmdWatch(io IO) *cobra.Command {
	opts := &WatchOptions{}
	cmd := &cobra.Command{
		Use:   "watch (pr <url> | <subject>)",
		Short: "Watch a pull request or a subject and deliver its events to a session's inbox",
		Long: `Create a sentinel.

  sentinel watch pr https://github.com/owner/repo/pull/12
      watches the pull request with the default PR event types until it
      closes (--until closed).
  sentinel watch github:owner/repo#12 --types github.check_suite.completed
      watches a subject (<scheme>:<path>; a trailing * is a prefix match),
      until never by default.

The events land in the inbox of --session (default $AGENTPROTO_SESSION).
Watching again what an active sentinel of the session already watches
(same clauses, until and urgency) prints "Already watching ... as sen_..."
and creates nothing, unless --allow-duplicate; --key names the watch, so
a later watch with the same key updates it in place. --batch 30s opts
into digests: the events of one subject inside 30 s become one message
that states the subject's new state (terminal events are never held
back; at most 10m). Warnings (a provider
that is not ready, a hook that could not be made) are printed on stderr;
the watch is made and the exit code is 0.`,
		Example: `  sentinel watch pr https://github.com/acme/widgets/pull/7 --session s1
  sentinel watch 'github:acme/widgets*' --session s1 --urgency fyi --json`,
		Args: func(cmd *cobra.Command, args []string) error {
			switch {
			case len(args) == 2 && args[0] == "pr":
				return nil
			case len(args) == 1 && args[0] != "pr":
				return nil
			case len(args) == 1:
				return usageError("`watch pr` needs the pull request URL: sentinel watch pr https://github.com/owner/repo/pull/12")
			}
			return usageError("give `pr <url>` or one subject (e.g. github:owner/repo#12)")
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ClientOptions = newClientOptions(io, cmd)
			opts.JSON = jsonFlag(cmd)
			if cmd.Flags().Changed("mute-self") {
				v, _ := cmd.Flags().GetBool("mute-self")
				opts.MuteSelf = &v
			}
			if len(args) == 2 {
				opts.PRURL = args[1]
			} else {
				opts.Subject = args[0]
			}
			return watchRun(cmd, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Session, "session", "", "session whose inbox receives the events (default $"+EnvSession+")")
	f.StringVar(&opts.Urgency, "urgency", "", "delivery urgency: fyi, next-turn (default), steer, interrupt")
	f.StringVar(&opts.Until, "until", "", "stop condition: closed (default for pr) or never (default for a subject)")
	f.StringVar(&opts.Provider, "provider", "", "provider slug (default: the best ready provider; see `sentinel adapters`)")
	f.StringSliceVar(&opts.Types, "types", nil, "event-type globs, comma-separated (default: the provider's defaults)")
	f.StringVar(&opts.Group, "group", "", "descriptive group")
	f.StringVar(&opts.Label, "label", "", "descriptive label")
	f.Bool("mute-self", false, "loop shield: do not wake the session for events the provider's own GitHub identity caused (terminal events always deliver)")
	f.StringVar(&opts.Key, "key", "", "name this watch within the session: watching again with the same key returns or updates that sentinel")
	f.BoolVar(&opts.AllowDuplicate, "allow-duplicate", false, "create another sentinel even when an equal active one exists (by default that one is returned)")
	f.DurationVar(&opts.Batch, "batch", 0, "digest window (e.g. 30s, at most 10m): one message per subject per window instead of one per event; terminal events are never held back")
	f.BoolVar(&opts.DryRun, "dry-run", false, "create nothing: count the journaled events this watch would have matched, with examples")
	addClientFlags(cmd)
	return cmd
}

func watchRun(cmd *cobra.Command, opts *WatchOptions) error {
	req := sentinel.WatchRequest{
		Subject:   opts.Subject,
		PRURL:     opts.PRURL,
		SessionID: sessionDefault(opts.Session),
		Types:     opts.Types,
		Provider:  opts.Provider,
		Group:     opts.Group,
		Label:     opts.Label,
		MuteSelf:  opts.MuteSelf,
		Key:       opts.Key,
		// --allow-duplicate: another sentinel even when an equal one exists.
		AllowDuplicate: opts.AllowDuplicate,
	}
	if opts.Batch < 0 || opts.Batch > time.Duration(sentinel.MaxBatchMs)*time.Millisecond || opts.Batch%time.Millisecond != 0 {
		return usageError("--batch must be a duration of whole milliseconds within 0..10m (got %s)", opts.Batch)
	}
	req.BatchMs = int(opts.Batch / time.Millisecond)
	if opts.Urgency != "" {
		u := sentinel.Urgency(opts.Urgency)
		if !u.Valid() {
			return usageError("--urgency must be one of fyi, next-turn, steer, interrupt (got %q)", opts.Urgency)
		}
		req.Urgency = u
	}
	if opts.Until != "" {
		kind := sentinel.UntilKindAlias(opts.Until)
		if kind != sentinel.UntilSubjectTerminal && kind != sentinel.UntilNever {
			return usageError("--until must be closed or never (got %q)", opts.Until)
		}
		req.Until = &sentinel.UntilArg{Until: sentinel.Until{Kind: kind}}
	}
	if opts.DryRun {
		return watchDryRun(cmd, opts, req) // dryrun.go
	}
	var v sentinel.View
	raw, err := opts.fetch(sentinelHints, func(c *apiclient.Client) (err error) {
		v, err = apiclient.Sentinels{C: c}.Create(cmd.Context(), req)
		return err
	})
	if err != nil {
		return err
	}
	// Warnings go to stderr in either mode: the watch was made (exit 0),
	// but nothing may come until they are fixed.
	printWarnings(opts.IO, v.Warnings)
	if opts.JSON {
		opts.printRaw(raw)
		return nil
	}
	switch {
	case v.Existing:
		fmt.Fprintf(opts.IO.Out, "Already watching %s as %s\n", subjects(v.Match), v.ID)
	case v.Updated:
		fmt.Fprintf(opts.IO.Out, "Updated the watch %s: watching %s as %s\n", v.Key, subjects(v.Match), v.ID)
	default:
		fmt.Fprintf(opts.IO.Out, "Watching %s as %s\n", subjects(v.Match), v.ID)
	}
	printView(&opts.ClientOptions, v)
	return nil
}

// printWarnings prints a watch's warnings on stderr, one with its fix.
func printWarnings(io IO, ws []sentinel.Warning) {
	for _, w := range ws {
		fmt.Fprintf(io.ErrOut, "warning: %s: %s\n", w.Code, w.Message)
		if w.Fix != "" {
			fmt.Fprintf(io.ErrOut, "  fix: %s\n", w.Fix)
		}
	}
}

// printView prints one sentinel as aligned key/value lines.
func printView(o *ClientOptions, v sentinel.View) {
	types := []string{}
	for _, c := range v.Match {
		types = append(types, c.Types...)
	}
	o.kv(
		"id", v.ID,
		"provider", v.Provider,
		"status", string(v.Status),
		"subject", subjects(v.Match),
		"types", strings.Join(types, ","),
		"until", untilText(v.Until),
		"target", targetText(v.Target),
		"group", v.Group,
		"label", v.Label,
		"key", v.Key,
		"created", msTime(v.CreatedTs),
		"events", strconv.Itoa(v.EventCount),
		"last event", msTime(v.LastEventTs),
		"last error", v.LastError,
		"mute self", onIf(v.MuteSelf),
		"batch", batchText(v.BatchMs),
	)
}

// NewCmdRm builds `sentinel rm <id>` (aliases delete, unwatch).
func NewCmdRm(io IO) *cobra.Command {
	return newIDCmd(io, idVerb{
		use:     "rm <id>",
		aliases: []string{"delete", "unwatch"},
		short:   "Remove a sentinel (cancels its provider-side watch, best effort)",
		missing: "give the sentinel id (see `sentinel list`)",
		run: func(cmd *cobra.Command, opts *IDOptions) error {
			if printed, err := opts.send(sentinelHints, func(c *apiclient.Client) error {
				return apiclient.Sentinels{C: c}.Remove(cmd.Context(), opts.ID)
			}); err != nil || printed {
				return err
			}
			fmt.Fprintf(opts.IO.Out, "Removed %s\n", opts.ID)
			return nil
		},
	})
}

// NewCmdStatus builds `sentinel status <id>`.
func NewCmdStatus(io IO) *cobra.Command {
	return newIDCmd(io, idVerb{
		use:     "status <id>",
		short:   "Show a sentinel's provider health (backoff, last error, hook state)",
		missing: "give the sentinel id (see `sentinel list`)",
		run:     statusRun,
	})
}

// statusRun prints the health; --json prints api.StatusAnswer, whose id
// names the sentinel (filled from the argument if the node left it out).
func statusRun(cmd *cobra.Command, opts *IDOptions) error {
	var st api.SentinelStatus
	if _, err := opts.fetch(sentinelHints, func(c *apiclient.Client) (err error) {
		st, err = apiclient.Sentinels{C: c}.Status(cmd.Context(), opts.ID)
		return err
	}); err != nil {
		return err
	}
	out := api.StatusAnswer{OK: true, ID: opts.ID, Status: st}
	if opts.JSON {
		opts.printJSON(out)
		return nil
	}
	health := "ok"
	if !st.OK {
		health = "NOT OK"
	}
	pairs := []string{
		"id", opts.ID,
		"provider", st.Provider,
		"status", string(st.Status),
		"health", health,
		"detail", st.Detail,
		"last error", st.LastError,
	}
	for _, k := range sortedKeys(st.Extra) {
		pairs = append(pairs, k, extraText(k, st.Extra[k]))
	}
	opts.kv(pairs...)
	return nil
}

// PollOptions are the options of `sentinel poll`.
type PollOptions struct {
	ClientOptions
	ID string
}

// NewCmdPoll builds `sentinel poll [id]`.
func NewCmdPoll(io IO) *cobra.Command {
	opts := &PollOptions{}
	cmd := &cobra.Command{
		Use:   "poll [id]",
		Short: "Run one poll tick now over every pollable sentinel (id: show that sentinel afterwards)",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ClientOptions = newClientOptions(io, cmd)
			opts.JSON = jsonFlag(cmd)
			if len(args) == 1 {
				opts.ID = args[0]
			}
			var v *sentinel.View
			if printed, err := opts.send(sentinelHints, func(c *apiclient.Client) (err error) {
				v, err = apiclient.Sentinels{C: c}.PollNow(cmd.Context(), opts.ID)
				return err
			}); err != nil || printed {
				return err
			}
			fmt.Fprintln(opts.IO.Out, "Polled.")
			if v != nil {
				printView(&opts.ClientOptions, *v)
			}
			return nil
		},
	}
	addClientFlags(cmd)
	return cmd
}

// ParkedOptions are the options of `sentinel parked`.
type ParkedOptions struct {
	ClientOptions
	Sentinel string
	Limit    int
}

// NewCmdParked builds `sentinel parked`.
func NewCmdParked(io IO) *cobra.Command {
	opts := &ParkedOptions{}
	cmd := &cobra.Command{
		Use:   "parked",
		Short: "List parked (undeliverable or post-mortem) events, newest last",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.ClientOptions = newClientOptions(io, cmd)
			opts.JSON = jsonFlag(cmd)
			return parkedRun(cmd, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Sentinel, "sentinel", "", "only this sentinel's records")
	cmd.Flags().IntVar(&opts.Limit, "limit", 100, "at most this many records (1..1000)")
	addClientFlags(cmd)
	cmd.AddCommand(NewCmdParkedReplay(io)) // replay.go
	return cmd
}

func parkedRun(cmd *cobra.Command, opts *ParkedOptions) error {
	if opts.Limit < 1 || opts.Limit > 1000 {
		return usageError("--limit must be within 1..1000 (got %d)", opts.Limit)
	}
	var parked []sentinel.Parked
	if printed, err := opts.send(sentinelHints, func(c *apiclient.Client) (err error) {
		parked, err = apiclient.Sentinels{C: c}.Parked(cmd.Context(), opts.Sentinel, opts.Limit)
		return err
	}); err != nil || printed {
		return err
	}
	if len(parked) == 0 {
		fmt.Fprintln(opts.IO.Out, "No parked events.")
		return nil
	}
	w := opts.table()
	row(w, "ID", "TIME", "SENTINEL/FOLLOW", "REASON", "TYPE", "SUBJECT", "SUMMARY")
	for _, p := range parked {
		owner := p.SentinelID
		if owner == "" {
			owner = p.FollowID
		}
		typ, subj, summary := "", "", clip(p.Text, 60)
		if p.Event != nil {
			typ, subj, summary = p.Event.Type, p.Event.Subject, clip(p.Event.Summary, 60)
		}
		row(w, p.ID, isoTime(p.Ts), owner, p.Reason, typ, subj, summary)
	}
	return w.Flush()
}

// exactArgs requires n arguments, naming the fix otherwise.
func exactArgs(n int, fix string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != n {
			return usageError("%s", fix)
		}
		return nil
	}
}

// sortedKeys returns the keys of m in order.
func sortedKeys(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }

// batchText renders a digest window ("" for none).
func batchText(ms int) string {
	if ms <= 0 {
		return ""
	}
	return (time.Duration(ms) * time.Millisecond).String()
}
