package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/api"
	"github.com/agentproto/sentinel/ingress/apiclient"
)

// followWait is the long-poll of one read of `inbox --follow` (under the
// client's per-attempt bound, and under common proxies' idle timeouts).
const followWait = 25 * time.Second

// followBackoffMax bounds the pause between reconnect attempts.
const followBackoffMax = 10 * time.Second

// reconnectPause doubles backoff (250 ms the first time, at most
// followBackoffMax) and waits that long before the next attempt; false
// when ctx ended first.
func reconnectPause(ctx context.Context, backoff *time.Duration) bool {
	*backoff = min(max(2**backoff, 250*time.Millisecond), followBackoffMax)
	t := time.NewTimer(*backoff)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// inboxCursor is the content of a --cursor-file: the session it follows
// and the inbox sequence of the last message it handled (printed, or
// filtered out).
type inboxCursor struct {
	Session string `json:"session"`
	After   uint64 `json:"after"`
}

// defaultCursorFile is <home>/cursors/inbox-<session>.json (a session id
// is a safe file name: [A-Za-z0-9_][A-Za-z0-9_-]*).
func defaultCursorFile(home, session string) string {
	return filepath.Join(home, "cursors", "inbox-"+session+".json")
}

// loadCursor reads a cursor file; ok is false when there is none yet.
func loadCursor(path, session string) (after uint64, ok bool, err error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, &ExitError{Code: api.ExitError, Err: fmt.Errorf("read the cursor file %s: %w", path, err)}
	}
	var c inboxCursor
	if err := json.Unmarshal(raw, &c); err != nil || c.Session == "" {
		return 0, false, usageError("the cursor file %s is not a cursor (want {\"session\":..,\"after\":..}): remove it to start after the session's read cursor", path)
	}
	if c.Session != session {
		return 0, false, usageError("the cursor file %s follows session %q, not %q: give each session its own --cursor-file", path, c.Session, session)
	}
	return c.After, true, nil
}

// saveCursor writes the cursor file atomically (a temporary file in the
// same folder, renamed over it), mode 0600 in a 0700 folder.
func saveCursor(path, session string, after uint64) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create the cursor folder: %w", err)
	}
	raw, _ := json.Marshal(inboxCursor{Session: session, After: after})
	tmp, err := os.CreateTemp(dir, ".cursor-*")
	if err != nil {
		return fmt.Errorf("write the cursor file: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("write the cursor file: %w", err)
	}
	if _, err := tmp.Write(append(raw, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("write the cursor file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write the cursor file: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write the cursor file: %w", err)
	}
	return nil
}

// parseUrgencies reads --urgency (a comma list of urgencies).
func parseUrgencies(list []string) (map[sentinel.Urgency]bool, error) {
	if len(list) == 0 {
		return nil, nil
	}
	out := map[sentinel.Urgency]bool{}
	for _, item := range list {
		for _, u := range strings.Split(item, ",") {
			u = strings.TrimSpace(u)
			if !sentinel.Urgency(u).Valid() {
				return nil, usageError("--urgency %q is not one of fyi, next-turn, steer, interrupt", u)
			}
			out[sentinel.Urgency(u)] = true
		}
	}
	return out, nil
}

// retryableFollow reports whether a failed read is worth another try: no
// node reachable, or a node that is not ready, overloaded or failing.
func retryableFollow(err error) bool {
	if errors.Is(err, apiclient.ErrUnreachable) {
		return true
	}
	var ae *apiclient.Error
	if errors.As(err, &ae) {
		return ae.Status == http.StatusTooManyRequests || ae.Status >= 500
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code == api.ExitUnavailable // no daemon.json yet: the node is starting
	}
	return false
}

// inboxFollow prints each new message of the session as one line (text,
// or JSON with --json), forever: long-polls of followWait over the node
// list (failover in the client), reconnecting with a capped backoff while
// no node answers, resuming after the sequence the cursor file holds. The
// cursor moves past a message only once its line was written; the
// session's own read cursor is never moved.
func inboxFollow(ctx context.Context, opts *InboxOptions) error {
	if ctx == nil {
		ctx = context.Background()
	}
	want, err := parseUrgencies(opts.Urgency)
	if err != nil {
		return err
	}
	after, have, err := loadCursor(opts.CursorFile, opts.Session)
	if err != nil {
		return err
	}
	wait := opts.followWait
	if wait <= 0 {
		wait = followWait
	}
	var c *apiclient.Client
	backoff := time.Duration(0)
	down := false
	for ctx.Err() == nil {
		if c == nil {
			if c, err = opts.APIClient(); err != nil && !retryableFollow(err) {
				return err
			}
		}
		var page api.InboxPage
		if err == nil {
			q := sentinel.InboxQuery{SessionID: opts.Session, Limit: 100, CorrelationID: opts.Correlation}
			if have {
				a := after
				q.After = &a
			}
			page, err = apiclient.Inboxes{C: c}.Wait(ctx, q, wait)
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if !retryableFollow(err) {
				return nodeError(err, sessionHints)
			}
			if !down {
				fmt.Fprintf(opts.IO.ErrOut, "sentinel inbox: %v; reconnecting\n", err)
				down = true
			}
			if !reconnectPause(ctx, &backoff) {
				return nil
			}
			c, err = nil, nil
			continue
		}
		if down {
			fmt.Fprintln(opts.IO.ErrOut, "sentinel inbox: reconnected")
			down = false
		}
		backoff = 0
		for _, m := range page.Messages {
			printed := false
			if want == nil || want[m.Urgency] {
				if err := opts.writeFollowLine(m); err != nil {
					return &ExitError{Code: api.ExitError, Err: fmt.Errorf("write: %w", err)}
				}
				printed = true
			}
			after, have = m.Seq, true
			if err := saveCursor(opts.CursorFile, opts.Session, after); err != nil {
				return &ExitError{Code: api.ExitError, Err: err}
			}
			if printed && opts.ExitOnMessage {
				return nil
			}
		}
		if !have || page.Next > after {
			after, have = page.Next, true
			if err := saveCursor(opts.CursorFile, opts.Session, after); err != nil {
				return &ExitError{Code: api.ExitError, Err: err}
			}
		}
	}
	return nil
}

// writeFollowLine writes one message as one line in a single write, then
// flushes when the output buffers.
func (opts *InboxOptions) writeFollowLine(m sentinel.Message) error {
	var err error
	if opts.JSON {
		err = writeJSONLine(opts.IO.Out, m)
	} else {
		_, err = fmt.Fprint(opts.IO.Out, messageLine(m)+"\n")
	}
	if err != nil {
		return err
	}
	if f, ok := opts.IO.Out.(interface{ Flush() error }); ok {
		return f.Flush()
	}
	return nil
}

// autoSession resolves --session auto for --follow: the most recently seen
// live session registered with the working directory, waiting (with the
// reconnect backoff) until there is one; "" when ctx ends first.
func (opts *InboxOptions) autoSession(ctx context.Context) (string, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	cwd, err := os.Getwd()
	if err != nil {
		return "", &ExitError{Code: api.ExitError, Err: fmt.Errorf("--session auto: %w", err)}
	}
	backoff := time.Duration(0)
	noted := false
	for ctx.Err() == nil {
		c, err := opts.APIClient()
		if err != nil && !retryableFollow(err) {
			return "", err
		}
		if err == nil {
			if id := sessionForCwd(ctx, apiclient.Sessions{C: c}, cwd); id != "" {
				return id, nil
			}
		}
		if !noted {
			fmt.Fprintf(opts.IO.ErrOut, "sentinel inbox: no live session registered for %s yet; waiting\n", cwd)
			noted = true
		}
		if !reconnectPause(ctx, &backoff) {
			break
		}
	}
	return "", nil
}
