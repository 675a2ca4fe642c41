package cli

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/apiclient"
)

var followHints = hints{
	sentinel.CodeFollowNotFound:   "list the follows with `sentinel follows`",
	sentinel.CodeNoFollower:       "pass --follower <id> or set " + EnvSession,
	sentinel.CodeInvalidSelector:  "pass --sessions a,b, --all or --cwd-prefix <path>",
	sentinel.CodeSessionNotFound:  "register the follower first with `sentinel session register <id>`",
	sentinel.CodeInvalidSessionID: "session ids are " + sentinel.SessionIDRule,
}

// FollowOptions are the options of `sentinel follow`.
type FollowOptions struct {
	ClientOptions
	Follower          string
	Key               string
	Sessions          []string
	All               bool
	CwdPrefix         string
	RootOnly          string
	ExcludeSessions   []string
	ExcludeLabels     []string
	Events            []string
	BatchMs           int
	IncludeEmptyTurns bool
	IncludeChildren   bool
}

// NewCmdFollow builds `sentinel follow`.
func NewCmdFollow(io IO) *cobra.Command {
	opts := &FollowOptions{}
	cmd := &cobra.Command{
		Use:   "follow (--sessions a,b | --all | --cwd-prefix <path>)",
		Short: "Wake a session with digests of other sessions' turns, waits, exits, crashes and PRs",
		Long: `Create (or, with --key, update) a session follow: the follower (default
$AGENTPROTO_SESSION) receives one coalesced digest message when sessions
matched by the selector end a turn, wait for input, exit, crash, open or
merge a PR.`,
		Example: `  sentinel follow --follower chief --all --events exited,crashed
  sentinel follow --follower chief --sessions s1,s2 --key watch-workers --batch-ms 0`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.ClientOptions = newClientOptions(io, cmd)
			opts.JSON = jsonFlag(cmd)
			return followRun(cmd, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Follower, "follower", "", "session to wake (default $"+EnvSession+")")
	f.StringVar(&opts.Key, "key", "", "caller-chosen key: re-using it updates that follow")
	f.StringSliceVar(&opts.Sessions, "sessions", nil, "follow these session ids (comma-separated)")
	f.BoolVar(&opts.All, "all", false, "follow every session (root sessions only unless --root-only=false)")
	f.StringVar(&opts.CwdPrefix, "cwd-prefix", "", "follow sessions whose cwd is this path or below")
	f.StringVar(&opts.RootOnly, "root-only", "", "true or false: skip sessions that have a parent (default: true with --all)")
	f.StringSliceVar(&opts.ExcludeSessions, "exclude-sessions", nil, "never deliver these session ids")
	f.StringSliceVar(&opts.ExcludeLabels, "exclude-labels", nil, "never deliver sessions with these labels")
	f.StringSliceVar(&opts.Events, "events", nil, "events to deliver (default all): "+strings.Join(sentinel.FollowEvents(), ","))
	f.IntVar(&opts.BatchMs, "batch-ms", -1, "coalescing window in ms, 0..600000 (default 15000; 0 = next tick)")
	f.BoolVar(&opts.IncludeEmptyTurns, "include-empty-turns", false, "also deliver empty (silent) turns")
	f.BoolVar(&opts.IncludeChildren, "include-children", false, "also deliver the follower's own descendants")
	addClientFlags(cmd)
	return cmd
}

func followRun(cmd *cobra.Command, opts *FollowOptions) error {
	req := sentinel.FollowRequest{
		Follower: sessionDefault(opts.Follower),
		Key:      opts.Key,
		Selector: sentinel.FollowSelector{SessionIDs: opts.Sessions, All: opts.All, CwdPrefix: opts.CwdPrefix},
		Events:   opts.Events,
	}
	if len(opts.Sessions) == 0 && !opts.All && opts.CwdPrefix == "" {
		return usageError("give a selector: --sessions a,b, --all, or --cwd-prefix <path>")
	}
	if opts.RootOnly != "" {
		b, err := strconv.ParseBool(opts.RootOnly)
		if err != nil {
			return usageError("--root-only must be true or false (got %q)", opts.RootOnly)
		}
		req.Selector.RootOnly = &b
	}
	if len(opts.ExcludeSessions) > 0 || len(opts.ExcludeLabels) > 0 {
		req.Exclude = &sentinel.FollowExclude{SessionIDs: opts.ExcludeSessions, Labels: opts.ExcludeLabels}
	}
	if opts.BatchMs >= 0 {
		b := opts.BatchMs
		req.BatchMs = &b
	}
	if opts.IncludeEmptyTurns {
		f := false
		req.SkipEmptyTurns = &f
	}
	if opts.IncludeChildren {
		f := false
		req.ExcludeFollowerChildren = &f
	}
	var fl sentinel.Follow
	if printed, err := opts.send(followHints, func(c *apiclient.Client) (err error) {
		fl, _, err = apiclient.Follows{C: c}.Create(cmd.Context(), req)
		return err
	}); err != nil || printed {
		return err
	}
	fmt.Fprintf(opts.IO.Out, "Following as %s\n", fl.ID)
	printFollow(&opts.ClientOptions, fl)
	return nil
}

func printFollow(o *ClientOptions, f sentinel.Follow) {
	excl := ""
	if f.Exclude != nil {
		excl = strings.Join(append(append([]string{}, f.Exclude.SessionIDs...), f.Exclude.Labels...), ",")
	}
	o.kv(
		"id", f.ID,
		"key", f.Key,
		"follower", f.Follower,
		"selector", selectorText(f.Selector),
		"exclude", excl,
		"events", strings.Join(f.Events, ","),
		"batch", strconv.Itoa(f.BatchMs)+" ms",
		"skip empty turns", strconv.FormatBool(f.SkipEmptyTurns),
		"exclude children", strconv.FormatBool(f.ExcludeFollowerChildren),
		"created", isoTime(f.CreatedAt),
	)
}

func selectorText(s sentinel.FollowSelector) string {
	var parts []string
	if len(s.SessionIDs) > 0 {
		parts = append(parts, "sessions="+strings.Join(s.SessionIDs, ","))
	}
	if s.All {
		parts = append(parts, "all")
	}
	if s.CwdPrefix != "" {
		parts = append(parts, "cwd="+s.CwdPrefix)
	}
	if s.RootOnly != nil && *s.RootOnly {
		parts = append(parts, "root-only")
	}
	return strings.Join(parts, " ")
}

// NewCmdUnfollow builds `sentinel unfollow <id|key>`.
func NewCmdUnfollow(io IO) *cobra.Command {
	return newIDCmd(io, idVerb{
		use:     "unfollow <id|key>",
		short:   "Remove a session follow by id (fol_...) or key",
		missing: "give the follow id or key (see `sentinel follows`)",
		run: func(cmd *cobra.Command, opts *IDOptions) error {
			var id string
			if printed, err := opts.send(followHints, func(c *apiclient.Client) (err error) {
				id, err = apiclient.Follows{C: c}.Remove(cmd.Context(), opts.ID)
				return err
			}); err != nil || printed {
				return err
			}
			fmt.Fprintf(opts.IO.Out, "Removed %s\n", id)
			return nil
		},
	})
}

// FollowsOptions are the options of `sentinel follows`.
type FollowsOptions struct {
	ClientOptions
	Follower string
}

// NewCmdFollows builds `sentinel follows`.
func NewCmdFollows(io IO) *cobra.Command {
	opts := &FollowsOptions{}
	cmd := &cobra.Command{
		Use:   "follows",
		Short: "List session follows",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.ClientOptions = newClientOptions(io, cmd)
			opts.JSON = jsonFlag(cmd)
			var follows []sentinel.Follow
			if printed, err := opts.send(followHints, func(c *apiclient.Client) (err error) {
				follows, err = apiclient.Follows{C: c}.List(cmd.Context(), opts.Follower)
				return err
			}); err != nil || printed {
				return err
			}
			if len(follows) == 0 {
				fmt.Fprintln(opts.IO.Out, "No follows. Create one with `sentinel follow --follower <id> --all`.")
				return nil
			}
			w := opts.table()
			row(w, "ID", "KEY", "FOLLOWER", "SELECTOR", "EVENTS", "BATCH MS", "CREATED")
			for _, f := range follows {
				row(w, f.ID, f.Key, f.Follower, selectorText(f.Selector), strings.Join(f.Events, ","), strconv.Itoa(f.BatchMs), isoTime(f.CreatedAt))
			}
			return w.Flush()
		},
	}
	cmd.Flags().StringVar(&opts.Follower, "follower", "", "only this follower's follows")
	addClientFlags(cmd)
	return cmd
}
