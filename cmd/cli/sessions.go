package cli

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/apiclient"
)

var sessionHints = hints{
	sentinel.CodeSessionNotFound:  "list the sessions with `sentinel session list`",
	sentinel.CodeInvalidSessionID: "session ids are " + sentinel.SessionIDRule,
}

// NewCmdSession builds `sentinel session` and its subcommands.
func NewCmdSession(io IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "session",
		Short: "Register, list, show and end sessions (the inboxes sentinels deliver to)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usageError("give a subcommand: register, list, show or end (see `sentinel session --help`)")
		},
	}
	cmd.AddCommand(NewCmdSessionRegister(io), NewCmdSessionList(io), NewCmdSessionShow(io), NewCmdSessionEnd(io))
	return cmd
}

// SessionRegisterOptions are the options of `sentinel session register`.
type SessionRegisterOptions struct {
	ClientOptions
	Req sentinel.RegisterSession
}

// NewCmdSessionRegister builds `sentinel session register <id>`.
func NewCmdSessionRegister(io IO) *cobra.Command {
	opts := &SessionRegisterOptions{}
	var label, cwd, parent, resumeURL, resumeCmd, notifyURL, notifyCmd string
	var ttl time.Duration
	var noSentinel bool
	cmd := &cobra.Command{
		Use:   "register [id]",
		Short: "Register (or update) a session; an ended session is revived",
		Long: `Register a session (default id $AGENTPROTO_SESSION). Flags not given keep
their stored value on an update. Hook commands are split on spaces and run
without a shell; {sessionId}, {messageId}, {urgency} and {kind} are
substituted in each argument.`,
		Example: `  sentinel session register s1 --label worker --cwd "$PWD" --notify-cmd 'my-harness wake {sessionId}'`,
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ClientOptions = newClientOptions(io, cmd)
			opts.JSON = jsonFlag(cmd)
			id := ""
			if len(args) == 1 {
				id = args[0]
			}
			opts.Req.ID = sessionDefault(id)
			if opts.Req.ID == "" {
				return usageError("give the session id, or set %s", EnvSession)
			}
			fl := cmd.Flags()
			if fl.Changed("label") {
				opts.Req.Label = &label
			}
			if fl.Changed("cwd") {
				opts.Req.Cwd = &cwd
			}
			if fl.Changed("parent") {
				opts.Req.ParentSessionID = &parent
			}
			if fl.Changed("heartbeat-ttl") {
				ms := ttl.Milliseconds()
				opts.Req.HeartbeatTTLMs = &ms
			}
			if noSentinel {
				f := false
				opts.Req.Sentinel = &f
			}
			resume, err := hookFlag("resume", resumeURL, resumeCmd)
			if err != nil {
				return err
			}
			notify, err := hookFlag("notify", notifyURL, notifyCmd)
			if err != nil {
				return err
			}
			if resume != nil || notify != nil {
				opts.Req.Hooks = &sentinel.SessionHooks{Resume: resume, Notify: notify}
			}
			var s sentinel.Session
			var created bool
			if printed, err := opts.send(sessionHints, func(c *apiclient.Client) (err error) {
				s, created, err = apiclient.Sessions{C: c}.Register(cmd.Context(), opts.Req)
				return err
			}); err != nil || printed {
				return err
			}
			verb := "Updated"
			if created {
				verb = "Registered"
			}
			fmt.Fprintf(opts.IO.Out, "%s session %s\n", verb, s.ID)
			printSession(&opts.ClientOptions, s)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&label, "label", "", "label")
	f.StringVar(&cwd, "cwd", "", "working directory")
	f.StringVar(&parent, "parent", "", "parent session id")
	f.DurationVar(&ttl, "heartbeat-ttl", 0, "heartbeat TTL: without a report for this long the session counts as crashed (e.g. 10m)")
	f.BoolVar(&noSentinel, "no-sentinel", false, "opt out of PR auto-link")
	f.StringVar(&resumeURL, "resume-url", "", "resume hook URL (POSTed to revive an ended session)")
	f.StringVar(&resumeCmd, "resume-cmd", "", "resume hook command (prints the live session id)")
	f.StringVar(&notifyURL, "notify-url", "", "notify hook URL (POSTed the message when one lands)")
	f.StringVar(&notifyCmd, "notify-cmd", "", "notify hook command (the message JSON on stdin)")
	addClientFlags(cmd)
	return cmd
}

// hookFlag builds a hook from its URL and command flags.
func hookFlag(name, u, c string) (*sentinel.Hook, error) {
	switch {
	case u != "" && c != "":
		return nil, usageError("give --%s-url or --%s-cmd, not both", name, name)
	case u != "":
		return &sentinel.Hook{URL: u}, nil
	case c != "":
		return &sentinel.Hook{Command: strings.Fields(c)}, nil
	}
	return nil, nil
}

func printSession(o *ClientOptions, s sentinel.Session) {
	hooks := []string{}
	if s.Hooks != nil {
		if s.Hooks.Resume != nil {
			hooks = append(hooks, "resume")
		}
		if s.Hooks.Notify != nil {
			hooks = append(hooks, "notify")
		}
	}
	prs := []string{}
	for _, p := range s.PRs {
		prs = append(prs, p.URL+" ("+p.State+")")
	}
	ttl := ""
	if s.HeartbeatTTLMs > 0 {
		ttl = (time.Duration(s.HeartbeatTTLMs) * time.Millisecond).String()
	}
	o.kv(
		"id", s.ID,
		"label", s.Label,
		"status", s.Status,
		"ended reason", s.EndedReason,
		"continued to", s.ContinuedTo,
		"cwd", s.Cwd,
		"parent", s.ParentSessionID,
		"created", msTime(s.CreatedTs),
		"last seen", msTime(s.LastSeenTs),
		"heartbeat ttl", ttl,
		"pr auto-link", strconv.FormatBool(s.Sentinel),
		"hooks", strings.Join(hooks, ","),
		"prs", strings.Join(prs, ", "),
		"last output", clip(s.LastOutput, 120),
		"last error", s.LastError,
		"notify error", s.NotifyError,
	)
}

// NewCmdSessionList builds `sentinel session list`.
func NewCmdSessionList(io IO) *cobra.Command {
	return newIDCmd(io, idVerb{use: "list", aliases: []string{"ls"}, short: "List sessions, oldest first", run: sessionListRun})
}

func sessionListRun(cmd *cobra.Command, opts *IDOptions) error {
	var list []sentinel.Session
	if printed, err := opts.send(sessionHints, func(c *apiclient.Client) (err error) {
		list, err = apiclient.Sessions{C: c}.List(cmd.Context())
		return err
	}); err != nil || printed {
		return err
	}
	if len(list) == 0 {
		fmt.Fprintln(opts.IO.Out, "No sessions. Register one with `sentinel session register <id>`.")
		return nil
	}
	w := opts.table()
	row(w, "ID", "LABEL", "STATUS", "PARENT", "CWD", "LAST SEEN")
	for _, s := range list {
		status := s.Status
		if s.EndedReason != "" {
			status += " (" + s.EndedReason + ")"
		}
		row(w, s.ID, s.Label, status, s.ParentSessionID, s.Cwd, msTime(s.LastSeenTs))
	}
	return w.Flush()
}

// NewCmdSessionShow builds `sentinel session show <id>`.
func NewCmdSessionShow(io IO) *cobra.Command {
	return newIDCmd(io, idVerb{
		use:     "show <id>",
		short:   "Show one session",
		missing: "give the session id (see `sentinel session list`)",
		run: func(cmd *cobra.Command, opts *IDOptions) error {
			var s sentinel.Session
			if printed, err := opts.send(sessionHints, func(c *apiclient.Client) (err error) {
				s, err = apiclient.Sessions{C: c}.Get(cmd.Context(), opts.ID)
				return err
			}); err != nil || printed {
				return err
			}
			printSession(&opts.ClientOptions, s)
			return nil
		},
	})
}

// SessionEndOptions are the options of `sentinel session end`.
type SessionEndOptions struct {
	ClientOptions
	ID     string
	Reason string
}

// NewCmdSessionEnd builds `sentinel session end <id>`.
func NewCmdSessionEnd(io IO) *cobra.Command {
	opts := &SessionEndOptions{}
	cmd := &cobra.Command{
		Use:   "end <id>",
		Short: "End a session (deliveries then go to its parent, or are parked)",
		Args:  exactArgs(1, "give the session id (see `sentinel session list`)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ClientOptions = newClientOptions(io, cmd)
			opts.JSON = jsonFlag(cmd)
			opts.ID = args[0]
			var s sentinel.Session
			if printed, err := opts.send(sessionHints, func(c *apiclient.Client) (err error) {
				s, err = apiclient.Sessions{C: c}.End(cmd.Context(), opts.ID, opts.Reason)
				return err
			}); err != nil || printed {
				return err
			}
			reason := s.EndedReason
			if reason == "" {
				reason = opts.Reason
			}
			fmt.Fprintf(opts.IO.Out, "Ended session %s (%s)\n", opts.ID, reason)
			return nil
		},
	}
	cmd.Flags().StringVar(&opts.Reason, "reason", "", "end reason (default operator-stopped; forgotten removes the session)")
	addClientFlags(cmd)
	return cmd
}
