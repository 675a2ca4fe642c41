package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/api"
	"github.com/agentproto/sentinel/ingress/apiclient"
)

// HookOptions are the options of the `sentinel hook <event>` verbs.
type HookOptions struct {
	IO        IO
	APIClient func() (*apiclient.Client, error)
	Now       func() time.Time
	// Event is the verb's event (session-start, stop, notification,
	// session-end, user-prompt-submit).
	Event string
	// Format is claude (Claude Code hook output) or text.
	Format string
	// Label, Parent, NoAutoLink and HeartbeatTTL describe the session at
	// registration.
	Label        string
	Parent       string
	NoAutoLink   bool
	HeartbeatTTL time.Duration
	// Deliver prints pending inbox messages (default on for session-start
	// and user-prompt-submit); BlockOnPending makes a Claude Code stop hook
	// continue the turn when messages are pending.
	Deliver        bool
	BlockOnPending bool
	// Limit bounds the messages delivered at once.
	Limit int
	// Timeout bounds the whole hook.
	Timeout time.Duration
}

// hookEvents maps every verb (and alias) to its canonical event.
var hookEvents = map[string]string{
	"session-start": "session-start", "stop": "stop", "turn-end": "stop",
	"notification": "notification", "awaiting-input": "notification",
	"session-end": "session-end", "user-prompt-submit": "user-prompt-submit",
}

func newHookCmd(io IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "hook <event>",
		Short: "Agent-harness hooks: register the session, report its lifecycle, inject pending inbox messages",
		Long: `Run from an agent harness's hooks with the hook's JSON payload on stdin
(Claude Code: session_id, cwd, hook_event_name, transcript_path, message,
prompt, reason, ...). Events: session-start, stop (turn-end), notification
(awaiting-input), session-end, user-prompt-submit. ` + "`sentinel hook wait`" + `
blocks until new messages arrive (the rewake hook: exit 2, messages on
stderr).

session-start and user-prompt-submit print the messages waiting in the
session's inbox (after its read cursor, which they advance) in the form the
harness injects as context: with --format claude a hookSpecificOutput JSON
with additionalContext, with --format text plain text.

A hook never fails the harness: when no node is reachable it notes it on
stderr and exits 0. See docs/harness.md.`,
		Args:      cobra.ExactArgs(1),
		ValidArgs: []string{"session-start", "stop", "turn-end", "notification", "awaiting-input", "session-end", "user-prompt-submit"},
		RunE: func(cmd *cobra.Command, args []string) error {
			ev, ok := hookEvents[args[0]]
			if !ok {
				return &flagError{err: fmt.Errorf("unknown hook event %q (one of session-start, stop, notification, session-end, user-prompt-submit)", args[0])}
			}
			o := &HookOptions{IO: io, APIClient: func() (*apiclient.Client, error) { return NewClient(cmd) }, Now: time.Now, Event: ev}
			f := cmd.Flags()
			o.Format, _ = f.GetString("format")
			o.Label, _ = f.GetString("label")
			o.Parent, _ = f.GetString("parent")
			o.NoAutoLink, _ = f.GetBool("no-auto-link")
			o.HeartbeatTTL, _ = f.GetDuration("heartbeat-ttl")
			o.BlockOnPending, _ = f.GetBool("block-on-pending")
			o.Limit, _ = f.GetInt("limit")
			o.Timeout, _ = f.GetDuration("timeout")
			o.Deliver = ev == "session-start" || ev == "user-prompt-submit"
			if f.Changed("deliver") {
				o.Deliver, _ = f.GetBool("deliver")
			}
			if o.Format != "claude" && o.Format != "text" {
				return &flagError{err: fmt.Errorf("--format must be claude or text")}
			}
			return hookRun(cmd.Context(), o)
		},
	}
	cmd.AddCommand(newHookWaitCmd(io))
	addClientFlags(cmd)
	f := cmd.Flags()
	f.String("format", "claude", "output form: claude (Claude Code hook JSON) or text")
	f.String("label", "", "session label at registration (default: the cwd's base name)")
	f.String("parent", "", "parent session id at registration (default $AGENTPROTO_PARENT_SESSION)")
	f.Bool("no-auto-link", false, "opt this session out of PR auto-link")
	f.Duration("heartbeat-ttl", 0, "heartbeat TTL of the session (0: none)")
	f.Bool("deliver", false, "print pending inbox messages (default on for session-start and user-prompt-submit)")
	f.Bool("block-on-pending", false, "stop hook: keep the turn going when next-turn messages are pending (Claude Code decision block)")
	f.Int("limit", 20, "most messages delivered at once")
	f.Duration("timeout", 8*time.Second, "bound on the whole hook")
	return cmd
}

// hookRun never fails the harness: every failure becomes a stderr note
// and exit 0.
func hookRun(ctx context.Context, o *HookOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	p, err := readPayload(o.IO.In)
	if err != nil {
		fmt.Fprintf(o.IO.ErrOut, "sentinel hook %s: %v; skipped\n", o.Event, err)
		return nil
	}
	if err := hookDo(ctx, o, p); err != nil {
		note := err.Error()
		if errors.Is(err, apiclient.ErrUnreachable) {
			note = "no sentinel node reachable (" + note + ")"
		}
		var ee *ExitError
		if errors.As(err, &ee) && ee.Code == api.ExitUnavailable {
			note = "no sentinel node reachable: " + ee.Err.Error()
		}
		fmt.Fprintf(o.IO.ErrOut, "sentinel hook %s: %s; skipped\n", o.Event, note)
	}
	return nil
}

func hookDo(ctx context.Context, o *HookOptions, p hookPayload) error {
	c, err := o.APIClient()
	if err != nil {
		return err
	}
	sess := apiclient.Sessions{C: c}
	id := p.SessionID
	switch o.Event {
	case "session-start", "user-prompt-submit":
		if _, _, err := sess.Register(ctx, o.registration(p)); err != nil {
			return err
		}
	case "stop":
		ev := sentinel.SessionReport{Kind: api.EventTurnEnd, Excerpt: lastAssistantText(p.TranscriptPath)}
		if err := sess.ReportEvent(ctx, id, ev); err != nil {
			return err
		}
	case "notification":
		if err := sess.ReportEvent(ctx, id, sentinel.SessionReport{Kind: api.EventAwaitingInput, Excerpt: p.Message}); err != nil {
			return err
		}
	case "session-end":
		if err := sess.ReportEvent(ctx, id, sentinel.SessionReport{Kind: api.EventExited, Reason: endReason(p.Reason)}); err != nil {
			return err
		}
	}
	if o.Event == "stop" && o.BlockOnPending && !p.StopHookActive {
		return o.blockOnPending(ctx, c, id)
	}
	if !o.Deliver {
		return nil
	}
	page, err := apiclient.Inboxes{C: c}.Read(ctx, sentinel.InboxQuery{SessionID: id, Limit: o.Limit, Ack: true})
	if err != nil {
		return err
	}
	return o.print(p, page.Messages)
}

func (o *HookOptions) registration(p hookPayload) sentinel.RegisterSession {
	req := sentinel.RegisterSession{ID: p.SessionID}
	if p.Cwd != "" {
		req.Cwd = &p.Cwd
	}
	label := o.Label
	if label == "" && p.Cwd != "" && p.HookEventName != "UserPromptSubmit" {
		label = filepath.Base(p.Cwd)
	}
	if label != "" {
		req.Label = &label
	}
	parent := o.Parent
	if parent == "" {
		parent = envParent()
	}
	if parent != "" && parent != p.SessionID {
		req.ParentSessionID = &parent
	}
	if o.NoAutoLink {
		f := false
		req.Sentinel = &f
	}
	if o.HeartbeatTTL > 0 {
		ms := o.HeartbeatTTL.Milliseconds()
		req.HeartbeatTTLMs = &ms
	}
	return req
}

// endReason maps Claude Code's SessionEnd reasons onto the end reasons:
// /clear starts a new session (restarted), logout and exiting the prompt
// are the operator's choice (operator-stopped); anything else is an exit
// that may be resumed.
func endReason(r string) string {
	switch strings.ToLower(r) {
	case "clear":
		return "restarted"
	case "logout", "prompt_input_exit":
		return "operator-stopped"
	case "":
		return ""
	}
	return "exited"
}

// blockOnPending answers a Claude Code stop hook with decision block when
// next-turn (or more urgent) messages are waiting, delivering them as the
// reason; the cursor advances past what was delivered.
func (o *HookOptions) blockOnPending(ctx context.Context, c *apiclient.Client, id string) error {
	page, err := apiclient.Inboxes{C: c}.Read(ctx, sentinel.InboxQuery{SessionID: id, Limit: o.Limit})
	if err != nil {
		return err
	}
	wake := false
	for _, m := range page.Messages {
		if m.Urgency != "fyi" {
			wake = true
		}
	}
	if !wake {
		return nil
	}
	page, err = apiclient.Inboxes{C: c}.Read(ctx, sentinel.InboxQuery{SessionID: id, Limit: o.Limit, Ack: true})
	if err != nil {
		return err
	}
	return writeJSONLine(o.IO.Out, map[string]any{"decision": "block", "reason": renderMessages(page.Messages)})
}

func (o *HookOptions) print(p hookPayload, msgs []sentinel.Message) error {
	if len(msgs) == 0 {
		return nil
	}
	text := renderMessages(msgs)
	if o.Format == "text" {
		_, err := fmt.Fprintln(o.IO.Out, text)
		return err
	}
	name := p.HookEventName
	if name == "" {
		name = map[string]string{"session-start": "SessionStart", "user-prompt-submit": "UserPromptSubmit"}[o.Event]
	}
	if name != "SessionStart" && name != "UserPromptSubmit" {
		// Only these two Claude Code events take additionalContext.
		_, err := fmt.Fprintln(o.IO.Out, text)
		return err
	}
	return writeJSONLine(o.IO.Out, map[string]any{"hookSpecificOutput": map[string]any{"hookEventName": name, "additionalContext": text}})
}
