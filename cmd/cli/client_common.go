package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/api"
	"github.com/agentproto/sentinel/ingress/apiclient"
)

// EnvSession names the calling session for client verbs (--session and
// --follower default to it).
const EnvSession = "AGENTPROTO_SESSION"

// ClientOptions are what every client verb's XOptions embeds: the IO
// streams, a lazy API client factory (node and token discovery run only
// when a request is made) and the --json switch.
type ClientOptions struct {
	IO        IO
	APIClient func() (*apiclient.Client, error)
	JSON      bool
}

// newClientOptions fills ClientOptions from a command; flags are read at
// run time.
func newClientOptions(io IO, cmd *cobra.Command) ClientOptions {
	return ClientOptions{
		IO:        io,
		APIClient: func() (*apiclient.Client, error) { return NewClient(cmd) },
	}
}

// IDOptions are the options of a verb that takes one id (rm, status,
// unfollow, session show) or no argument at all (list, session list,
// adapters; ID is then empty).
type IDOptions struct {
	ClientOptions
	ID string
}

// idVerb describes a verb that takes one id, or none when missing is "".
type idVerb struct {
	use, short, missing string
	aliases             []string
	run                 func(cmd *cobra.Command, opts *IDOptions) error
}

// newIDCmd builds a one-id verb (no argument when v.missing is "") with
// the client flags; runF, when set, replaces the verb's run (tests).
func newIDCmd(io IO, v idVerb, runF func(*IDOptions) error) *cobra.Command {
	opts := &IDOptions{}
	args := exactArgs(1, v.missing)
	if v.missing == "" {
		args = cobra.NoArgs
	}
	cmd := &cobra.Command{
		Use:     v.use,
		Aliases: v.aliases,
		Short:   v.short,
		Args:    args,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ClientOptions = newClientOptions(io, cmd)
			opts.JSON = jsonFlag(cmd)
			if len(args) > 0 {
				opts.ID = args[0]
			}
			if runF != nil {
				return runF(opts)
			}
			return v.run(cmd, opts)
		},
	}
	addClientFlags(cmd)
	return cmd
}

// hints name the fix for a node error code, per verb family.
type hints map[string]string

// call sends one request. With --json the node's JSON answer (or error
// body) is printed verbatim to stdout; otherwise a 2xx answer is decoded
// into out for the human rendering. Errors carry the exit code of the
// catalogue (api.ExitCode) and a message naming the fix.
func (o *ClientOptions) call(ctx context.Context, method, path string, body, out any, h hints) (printed bool, err error) {
	raw, err := o.fetch(ctx, method, path, body, h)
	if err != nil {
		return false, err
	}
	if o.JSON {
		o.printRaw(raw)
		return true, nil
	}
	if out != nil {
		if err := decodeAnswer(raw, out); err != nil {
			return false, err
		}
	}
	return false, nil
}

// fetch sends one request and returns the 2xx answer undecoded; on a node
// error with --json the error body is printed, as call does.
func (o *ClientOptions) fetch(ctx context.Context, method, path string, body any, h hints) ([]byte, error) {
	c, err := o.APIClient()
	if err != nil {
		return nil, err
	}
	raw, err := c.Raw(ctx, method, path, body)
	if err != nil {
		var ae *apiclient.Error
		if o.JSON && errors.As(err, &ae) {
			o.printJSON(api.ErrorBody{Error: ae.Code, Message: ae.Message})
		}
		return nil, nodeError(err, h)
	}
	return raw, nil
}

// decodeAnswer decodes a node's 2xx answer into out.
func decodeAnswer(raw []byte, out any) error {
	if err := json.Unmarshal(raw, out); err != nil {
		return &ExitError{Code: api.ExitError, Err: fmt.Errorf("the node's answer is not what this CLI expects (%v): is the node the same version?", err)}
	}
	return nil
}

// nodeError maps a client error to an exit error (clientError) and adds
// the verb's hint for the node's code.
func nodeError(err error, h hints) error {
	ee := clientError(err)
	var ae *apiclient.Error
	var x *ExitError
	if errors.As(err, &ae) && errors.As(ee, &x) {
		if hint, found := h[ae.Code]; found {
			x.Err = fmt.Errorf("%w (%s)", x.Err, hint)
		} else if ae.Code == api.CodeNotReady {
			x.Err = fmt.Errorf("%w (the node is not ready yet: `sentinel health` says why; it keeps answering 503 until it is)", x.Err)
		}
	}
	return ee
}

func (o *ClientOptions) printRaw(raw []byte) {
	var buf bytes.Buffer
	if json.Indent(&buf, bytes.TrimSpace(raw), "", "  ") != nil {
		buf.Reset()
		buf.Write(bytes.TrimSpace(raw))
	}
	buf.WriteByte('\n')
	_, _ = o.IO.Out.Write(buf.Bytes())
}

func (o *ClientOptions) printJSON(v any) {
	raw, _ := json.Marshal(v)
	o.printRaw(raw)
}

// table returns a tabwriter for aligned human output.
func (o *ClientOptions) table() *tabwriter.Writer {
	return tabwriter.NewWriter(o.IO.Out, 0, 4, 2, ' ', 0)
}

// row writes tab-separated cells, "-" for an empty cell.
func row(w io.Writer, cells ...string) {
	for i, c := range cells {
		if c == "" {
			c = "-"
		}
		c = strings.ReplaceAll(strings.ReplaceAll(c, "\t", " "), "\n", " ")
		if i > 0 {
			_, _ = io.WriteString(w, "\t")
		}
		_, _ = io.WriteString(w, c)
	}
	_, _ = io.WriteString(w, "\n")
}

// kv writes key/value pairs aligned, skipping empty values.
func (o *ClientOptions) kv(pairs ...string) {
	w := o.table()
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] == "" {
			continue
		}
		fmt.Fprintf(w, "%s:\t%s\n", pairs[i], pairs[i+1])
	}
	_ = w.Flush()
}

// usageError is a bad flag or argument: exit 2 with the fix.
func usageError(format string, args ...any) error {
	return &ExitError{Code: api.ExitUsage, Err: fmt.Errorf(format, args...)}
}

// sessionDefault returns the flag value, else $AGENTPROTO_SESSION.
func sessionDefault(v string) string {
	if v != "" {
		return v
	}
	return os.Getenv(EnvSession)
}

// msTime renders epoch milliseconds in local time ("-" for zero).
func msTime(ms int64) string {
	if ms <= 0 {
		return ""
	}
	return time.UnixMilli(ms).Local().Format("2006-01-02 15:04:05")
}

// isoTime renders an RFC 3339 timestamp in local time, or as given.
func isoTime(s string) string {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.Local().Format("2006-01-02 15:04:05")
	}
	return s
}

// subjects joins a sentinel's clause subjects.
func subjects(m []sentinel.Clause) string {
	out := make([]string, 0, len(m))
	for _, c := range m {
		out = append(out, c.Subject)
	}
	return strings.Join(out, ",")
}

// untilText renders an until condition.
func untilText(u sentinel.Until) string {
	switch u.Kind {
	case sentinel.UntilAt:
		return "at " + msTime(u.Ms)
	case sentinel.UntilCount:
		return fmt.Sprintf("count %d", u.N)
	}
	return u.Kind
}

// targetText renders a delivery target.
func targetText(t sentinel.Target) string {
	if t.Kind == sentinel.TargetSession {
		return t.SessionID + " (" + string(t.Urgency) + ")"
	}
	if t.Kind == sentinel.TargetMCPEvents {
		return t.Kind + " (" + t.Mode + ")"
	}
	return t.Kind
}

// clip shortens s to n runes with an ellipsis.
func clip(s string, n int) string {
	r := []rune(strings.Join(strings.Fields(s), " "))
	if len(r) <= n {
		return string(r)
	}
	return string(r[:n-1]) + "…"
}
