package cli

import (
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/api"
	"github.com/agentproto/sentinel/ingress/apiclient"
)

// InboxOptions are the options of `sentinel inbox`.
type InboxOptions struct {
	ClientOptions
	Session     string
	Wait        time.Duration
	After       int64
	Correlation string
	Limit       int
	Ack         bool
	// Follow prints each new message as one line, forever (a monitor).
	Follow        bool
	CursorFile    string
	ExitOnMessage bool
	Urgency       []string
	followWait    time.Duration
}

// NewCmdInbox builds `sentinel inbox [session]`.
func NewCmdInbox(io IO) *cobra.Command {
	opts := &InboxOptions{}
	cmd := &cobra.Command{
		Use:   "inbox [session]",
		Short: "Read a session's inbox (with --wait, long-poll for the next message)",
		Long: `Read a session's inbox (default $AGENTPROTO_SESSION), oldest first. Without
--after it reads after the session's read cursor; --ack advances the
cursor past what was read. --wait (1s..49s) returns as soon as a matching
message is there, or empty when the wait ends.

--follow prints one line per new message, forever, and flushes each at
once (for Claude Code's Monitor tool, a status bar, a shell loop):

  [urgency] "summary" — subject (sentinel, seq N)

or, with --json, one message JSON object per line. It reconnects (and
fails over across the --url list) when the node goes away, and persists
its position in --cursor-file (default <home>/cursors/inbox-<session>.json,
mode 0600) after each line, so a restarted monitor prints no message
twice; the first run starts after the session's read cursor. It never
moves the read cursor itself. --exit-on-message exits 0 after the first
new line; --urgency keeps only the listed urgencies. PR text in a line is
quoted and escaped: one message is always exactly one line. With the
session auto it follows the most recently seen live session registered
with the working directory (the one Claude Code's session-start hook
registered), waiting for one to appear.`,
		Example: `  sentinel inbox s1
  sentinel inbox s1 --wait 20s --correlation 'sentinel:github:acme/widgets#7'
  sentinel inbox s1 --follow --urgency next-turn,steer,interrupt
  sentinel inbox s1 --follow --exit-on-message --json
  sentinel inbox auto --follow`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ClientOptions = newClientOptions(io, cmd)
			opts.JSON = jsonFlag(cmd)
			s := ""
			if len(args) == 1 {
				s = args[0]
			}
			opts.Session = sessionDefault(s)
			return inboxRun(cmd, opts)
		},
	}
	f := cmd.Flags()
	f.DurationVar(&opts.Wait, "wait", 0, "wait up to this long (1s..49s) for a matching message")
	f.Int64Var(&opts.After, "after", -1, "read after this sequence (default: the session's read cursor)")
	f.StringVar(&opts.Correlation, "correlation", "", "only messages with this correlation id (e.g. sentinel:github:owner/repo#12)")
	f.IntVar(&opts.Limit, "limit", 0, "at most this many messages, 1..500 (default 50)")
	f.BoolVar(&opts.Ack, "ack", false, "advance the read cursor past the messages read")
	f.BoolVar(&opts.Follow, "follow", false, "print one line per new message, forever (reconnecting; resumes from --cursor-file)")
	f.StringVar(&opts.CursorFile, "cursor-file", "", "with --follow: where the position is kept (default <home>/cursors/inbox-<session>.json)")
	f.BoolVar(&opts.ExitOnMessage, "exit-on-message", false, "with --follow: exit 0 after the first new message")
	f.StringSliceVar(&opts.Urgency, "urgency", nil, "with --follow: only these urgencies (comma list of fyi, next-turn, steer, interrupt)")
	addClientFlags(cmd)
	return cmd
}

func inboxRun(cmd *cobra.Command, opts *InboxOptions) error {
	if opts.Session == "" {
		return usageError("give the session id, or set %s", EnvSession)
	}
	if !opts.Follow && (opts.CursorFile != "" || opts.ExitOnMessage || len(opts.Urgency) > 0) {
		return usageError("--cursor-file, --exit-on-message and --urgency go with --follow")
	}
	if opts.Follow {
		if opts.Wait != 0 || opts.Ack || opts.After >= 0 || opts.Limit != 0 {
			return usageError("--follow takes no --wait, --ack, --after or --limit (it waits by itself and keeps its own cursor in --cursor-file)")
		}
		if opts.Session == SessionAuto {
			id, err := opts.autoSession(cmd.Context())
			if err != nil || id == "" {
				return err
			}
			opts.Session = id
		}
		if !sentinel.ValidSessionID(opts.Session) {
			return usageError("session id %q is invalid", opts.Session)
		}
		if opts.CursorFile == "" {
			opts.CursorFile = defaultCursorFile(resolveHome(cmd), opts.Session)
		}
		return inboxFollow(cmd.Context(), opts)
	}
	if opts.Wait != 0 && (opts.Wait < api.MinWait || opts.Wait > api.MaxWait) {
		return usageError("--wait must be within 1s..49s (got %s)", opts.Wait)
	}
	if opts.Limit < 0 || opts.Limit > 500 {
		return usageError("--limit must be within 1..500 (got %d)", opts.Limit)
	}
	q := sentinel.InboxQuery{SessionID: opts.Session, Limit: opts.Limit, CorrelationID: opts.Correlation, Ack: opts.Ack}
	if opts.After >= 0 {
		a := uint64(opts.After)
		q.After = &a
	}
	var page api.InboxPage
	if printed, err := opts.send(sessionHints, func(c *apiclient.Client) (err error) {
		if opts.Wait > 0 {
			page, err = apiclient.Inboxes{C: c}.Wait(cmd.Context(), q, opts.Wait)
		} else {
			page, err = apiclient.Inboxes{C: c}.Read(cmd.Context(), q)
		}
		return err
	}); err != nil || printed {
		return err
	}
	if len(page.Messages) == 0 {
		if opts.Wait > 0 {
			fmt.Fprintf(opts.IO.Out, "No messages for %s (waited %s). next: %d\n", opts.Session, opts.Wait, page.Next)
		} else {
			fmt.Fprintf(opts.IO.Out, "No messages for %s. next: %d\n", opts.Session, page.Next)
		}
		return nil
	}
	w := opts.table()
	row(w, "SEQ", "TIME", "URGENCY", "KIND", "FROM", "CORRELATION", "TEXT")
	for _, m := range page.Messages {
		from := m.From.Relation
		if m.From.SessionID != "" {
			from += ":" + m.From.SessionID
		}
		if m.From.Principal != "" && m.From.Relation != "principal" {
			from += " (" + m.From.Principal + ")"
		} else if m.From.Principal != "" {
			from += ":" + m.From.Principal
		}
		row(w, strconv.FormatUint(m.Seq, 10), isoTime(m.Ts), string(m.Urgency), m.Kind, from, m.CorrelationID, clip(m.Text, 80))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(opts.IO.Out, "next: %d (pass --after %d to read on)\n", page.Next, page.Next)
	return nil
}
