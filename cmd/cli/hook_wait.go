package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/api"
	"github.com/agentproto/sentinel/ingress/apiclient"
)

// ExitWoken is the exit code of `sentinel hook wait` when messages came:
// the code harnesses read as "show stderr to the model and go on" (Claude
// Code's exit 2).
const ExitWoken = 2

// HookWaitOptions are the options of `sentinel hook wait`.
type HookWaitOptions struct {
	IO        IO
	APIClient func() (*apiclient.Client, error)
	Session   string
	Timeout   time.Duration
	Limit     int
	// chunk is the long-poll of one request (default followWait).
	chunk time.Duration
}

func newHookWaitCmd(io IO) *cobra.Command {
	o := &HookWaitOptions{IO: io}
	cmd := &cobra.Command{
		Use:   "wait",
		Short: "Block until the session's inbox has new messages (exit 2, messages on stderr) or the timeout (exit 0)",
		Long: `Wait for new messages in a session's inbox, the shape harnesses use to wake
an idle model from a hook: when messages arrive (or are already waiting
after the session's read cursor) it prints them on stderr, rendered and
escaped as the other hooks do (untrusted bodies inside agentproto-message
elements), advances the read cursor past them once they are written, and
exits 2; when --timeout passes first it exits 0 without output.

The session is --session, else the session_id of a hook payload on stdin
(Claude Code), else $AGENTPROTO_SESSION. While no node answers it keeps
trying until the timeout, then notes it on stderr and exits 0. A bad flag
exits 1, never 2. See docs/harness.md.`,
		Example: `  sentinel hook wait --session s1 --timeout 10m
  # Claude Code Stop hook: stdin carries session_id
  sentinel hook wait --timeout 55m`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.APIClient = func() (*apiclient.Client, error) { return NewClient(cmd) }
			if o.Session == "" {
				o.Session = payloadSession(io.In)
			}
			o.Session = sessionDefault(o.Session)
			return hookWaitRun(cmd.Context(), o)
		},
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &ExitError{Code: api.ExitError, Err: err}
	})
	addClientFlags(cmd)
	f := cmd.Flags()
	f.StringVar(&o.Session, "session", "", "session id (default: the hook payload's session_id, else $AGENTPROTO_SESSION)")
	f.DurationVar(&o.Timeout, "timeout", 10*time.Minute, "give up (exit 0) after this long")
	f.IntVar(&o.Limit, "limit", 20, "most messages shown at once (1..500)")
	return cmd
}

// payloadSession reads a hook payload's session_id from stdin when stdin
// is not a terminal (within payloadWait); "" otherwise.
func payloadSession(in io.Reader) string {
	if in == nil {
		return ""
	}
	if f, ok := in.(*os.File); ok {
		if st, err := f.Stat(); err != nil || st.Mode()&os.ModeCharDevice != 0 {
			return ""
		}
	}
	got := make(chan string, 1)
	go func() {
		p, err := readPayload(in)
		if err != nil {
			got <- ""
			return
		}
		got <- p.SessionID
	}()
	t := time.NewTimer(payloadWait)
	defer t.Stop()
	select {
	case id := <-got:
		return id
	case <-t.C:
		return "" // a stdin left open without a payload: use the other sources
	}
}

// payloadWait bounds the read of a hook payload on stdin.
const payloadWait = 2 * time.Second

func hookWaitRun(ctx context.Context, o *HookWaitOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if !sentinel.ValidSessionID(o.Session) {
		return &ExitError{Code: api.ExitError, Err: fmt.Errorf("give the session: --session, a hook payload with session_id on stdin, or %s (got %q)", EnvSession, o.Session)}
	}
	if o.Timeout <= 0 {
		return &ExitError{Code: api.ExitError, Err: errors.New("--timeout must be positive")}
	}
	if o.Limit < 1 || o.Limit > 500 {
		return &ExitError{Code: api.ExitError, Err: fmt.Errorf("--limit must be within 1..500 (got %d)", o.Limit)}
	}
	chunk := o.chunk
	if chunk <= 0 {
		chunk = followWait
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	var lastErr error
	backoff := time.Duration(0)
	for {
		left := time.Until(deadlineOf(ctx))
		if ctx.Err() != nil || left <= 0 {
			break
		}
		msgs, err := o.waitOnce(ctx, min(chunk, max(left, api.MinWait)))
		if err == nil && len(msgs) > 0 {
			if _, err := fmt.Fprintln(o.IO.ErrOut, renderMessages(msgs)); err != nil {
				return &ExitError{Code: api.ExitError, Err: err}
			}
			o.ack(msgs)
			return &ExitError{Code: ExitWoken}
		}
		if err == nil {
			lastErr, backoff = nil, 0
			continue
		}
		if ctx.Err() != nil {
			break
		}
		lastErr = err
		if !retryableFollow(err) {
			break
		}
		reconnectPause(ctx, &backoff) // ctx's end is seen at the loop's top
	}
	if lastErr != nil {
		note := lastErr.Error()
		if retryableFollow(lastErr) {
			note = "no sentinel node reachable (" + note + ")"
		}
		fmt.Fprintf(o.IO.ErrOut, "sentinel hook wait: %s; no messages\n", note)
	}
	return nil
}

func deadlineOf(ctx context.Context) time.Time {
	d, _ := ctx.Deadline()
	return d
}

// waitOnce long-polls once after the session's read cursor, without
// advancing it (ack does, after the messages were written).
func (o *HookWaitOptions) waitOnce(ctx context.Context, d time.Duration) ([]sentinel.Message, error) {
	c, err := o.APIClient()
	if err != nil {
		return nil, err
	}
	page, err := apiclient.Inboxes{C: c}.Wait(ctx, sentinel.InboxQuery{SessionID: o.Session, Limit: o.Limit}, d)
	if err != nil {
		return nil, err
	}
	return page.Messages, nil
}

// ack advances the read cursor past msgs (a read of the same page with
// ack), so no hook or later wait shows them again. A failure is noted: the
// messages may then show once more.
func (o *HookWaitOptions) ack(msgs []sentinel.Message) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := o.APIClient()
	if err == nil {
		after := msgs[0].Seq - 1
		_, err = apiclient.Inboxes{C: c}.Read(ctx, sentinel.InboxQuery{SessionID: o.Session, After: &after, Limit: len(msgs), Ack: true})
	}
	if err != nil {
		fmt.Fprintf(o.IO.ErrOut, "sentinel hook wait: could not advance the read cursor (%v): these messages may show again\n", err)
	}
}
