package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

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
// the client flags.
func newIDCmd(io IO, v idVerb) *cobra.Command {
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
			return v.run(cmd, opts)
		},
	}
	addClientFlags(cmd)
	return cmd
}

// hints name the fix for a node error code, per verb family.
type hints map[string]string

// send runs one typed call of the API client (ingress/apiclient) through
// a client that keeps the node's answer. With --json that answer (or the
// node's error body) is printed verbatim to stdout and printed is true;
// otherwise the caller renders what the call returned. Errors carry the
// exit code of the catalogue (api.ExitCode) and a message naming the fix.
func (o *ClientOptions) send(h hints, call func(c *apiclient.Client) error) (printed bool, err error) {
	raw, err := o.fetch(h, call)
	if err != nil {
		return false, err
	}
	if o.JSON {
		o.printRaw(raw)
		return true, nil
	}
	return false, nil
}

// fetch runs one typed call as send does and returns the node's 2xx
// answer undecoded, printing nothing but, with --json, a node's error
// body.
func (o *ClientOptions) fetch(h hints, call func(c *apiclient.Client) error) (json.RawMessage, error) {
	c, err := o.APIClient()
	if err != nil {
		return nil, err
	}
	var raw json.RawMessage
	if err := call(c.KeepAnswer(&raw)); err != nil {
		err = clientCause(err)
		var x *ExitError
		if errors.As(err, &x) {
			return nil, x
		}
		var ae *apiclient.Error
		if o.JSON && errors.As(err, &ae) {
			o.printJSON(api.ErrorBody{Error: ae.Code, Message: ae.Message})
		}
		return nil, nodeError(err, h)
	}
	return raw, nil
}

// clientCause undoes apiclient.AsDomain, which the typed calls apply: the
// CLI maps the client's own error (clientError), and an answer it cannot
// decode says the node may be of another version.
func clientCause(err error) error {
	var de *sentinel.Error
	if errors.As(err, &de) && de.Err != nil {
		err = de.Err
	}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	if errors.As(err, &syn) || errors.As(err, &typ) {
		return &ExitError{Code: api.ExitError, Err: fmt.Errorf("the node's answer is not what this CLI expects (%v): is the node the same version?", err)}
	}
	return err
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
