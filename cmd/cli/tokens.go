package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/api"
	"github.com/agentproto/sentinel/ingress/apiclient"
)

// tokenHints name the fix for the token verbs' errors.
var tokenHints = hints{
	sentinel.CodeForbiddenScope: "managing tokens needs an admin token (the node's own <home>/daemon-token, or AGENTPROTO_TOKEN)",
	sentinel.CodeTokenExists:    "revoke it first (`sentinel token revoke <name>`), or choose another name",
	sentinel.CodeTokenNotFound:  "list the tokens with `sentinel token list`",
}

// NewCmdToken builds `sentinel token` and its create, list and revoke
// subcommands.
func NewCmdToken(io IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "token",
		Short: "Manage named API tokens with scopes (admin, agent, read)",
		Long: `Named API tokens let callers other than the operator reach the node with less
than everything. Each has a name, a scope and, for agent (required) and read
(optional), the session id prefix it acts for:

  admin  everything, like the node's own token
  agent  the sentinels, sessions, inboxes and follows of its sessions; none of
         the operator's settings (tokens, provider setup, replays, cluster
         changes, session hooks); its messages are labelled with its name
  read   reads only (of its sessions, with --sessions)

A token is shown once, when it is created; the node keeps only its hash.
Every node of the service accepts it. The node's own token stays the admin
token. Managing tokens needs an admin token. See docs/api.md, "Principals".`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newCmdTokenCreate(io), newCmdTokenList(io), newCmdTokenRevoke(io))
	return cmd
}

// TokenCreateOptions are the options of `sentinel token create`.
type TokenCreateOptions struct {
	ClientOptions
	api.TokenRequest
}

func newCmdTokenCreate(io IO) *cobra.Command {
	opts := &TokenCreateOptions{}
	var scope string
	cmd := &cobra.Command{
		Use:   "create --name <name> --scope admin|agent|read [--sessions <prefix>]",
		Short: "Create a named token and print it (shown this once)",
		Example: `  sentinel token create --name ci-bot --scope agent --sessions ci-
  sentinel token create --name dashboard --scope read
  sentinel token create --name all-agents --scope agent --sessions '*'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.ClientOptions = newClientOptions(io, cmd)
			opts.JSON = jsonFlag(cmd)
			opts.Scope = sentinel.Scope(scope)
			if opts.Name == "" || scope == "" {
				return &ExitError{Code: api.ExitUsage, Err: fmt.Errorf("give --name and --scope (admin, agent or read)")}
			}
			var out api.TokenCreated
			if printed, err := opts.send(tokenHints, func(c *apiclient.Client) (err error) {
				out, err = apiclient.Tokens{C: c}.Create(cmd.Context(), opts.TokenRequest)
				return err
			}); err != nil || printed {
				return err
			}
			fmt.Fprintln(opts.IO.Out, out.Token)
			fmt.Fprintf(opts.IO.ErrOut, "Created token %s (scope %s%s). It is shown this once: keep it now.\n",
				out.View.Name, out.View.Scope, sessionsNote(out.View.Sessions))
			return nil
		},
	}
	cmd.Flags().StringVar(&opts.Name, "name", "", "the token's name (a-z, 0-9, -)")
	cmd.Flags().StringVar(&scope, "scope", "", "admin, agent or read")
	cmd.Flags().StringVar(&opts.Sessions, "sessions", "", "the session id prefix it acts for (agent: required, '*' for every session; read: optional)")
	addClientFlags(cmd)
	return cmd
}

func sessionsNote(prefix string) string {
	if prefix == "" {
		return ""
	}
	return ", sessions " + prefix
}

func newCmdTokenList(io IO) *cobra.Command {
	return newIDCmd(io, idVerb{
		use:   "list",
		short: "List the named tokens (names, scopes, prefixes; never a secret)",
		run: func(cmd *cobra.Command, opts *IDOptions) error {
			var tokens []api.TokenView
			if printed, err := opts.send(tokenHints, func(c *apiclient.Client) (err error) {
				tokens, err = apiclient.Tokens{C: c}.List(cmd.Context())
				return err
			}); err != nil || printed {
				return err
			}
			if len(tokens) == 0 {
				fmt.Fprintln(opts.IO.Out, "No named tokens (the node's own token is the admin token).")
				return nil
			}
			w := opts.table()
			row(w, "NAME", "SCOPE", "SESSIONS", "CREATED", "BY")
			for _, t := range tokens {
				row(w, t.Name, string(t.Scope), dash(t.Sessions), localTime(t.CreatedAt), t.CreatedBy)
			}
			return w.Flush()
		},
	})
}

func newCmdTokenRevoke(io IO) *cobra.Command {
	return newIDCmd(io, idVerb{
		use:     "revoke <name>",
		short:   "Revoke a named token: every node refuses it from then on",
		missing: "give the name of the token to revoke (see `sentinel token list`)",
		run: func(cmd *cobra.Command, opts *IDOptions) error {
			if printed, err := opts.send(tokenHints, func(c *apiclient.Client) error {
				return apiclient.Tokens{C: c}.Revoke(cmd.Context(), opts.ID)
			}); err != nil || printed {
				return err
			}
			fmt.Fprintf(opts.IO.Out, "Revoked token %s.\n", opts.ID)
			return nil
		},
	})
}
