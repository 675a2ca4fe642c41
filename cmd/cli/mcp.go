package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agentproto/sentinel/ingress/apiclient"
	"github.com/agentproto/sentinel/ingress/mcp"
)

// MCPOptions are the options of `sentinel mcp`.
type MCPOptions struct {
	ClientOptions
	Session string
}

// NewCmdMCP builds `sentinel mcp --session <id>`: a stdio MCP server
// whose tools call the running node's REST API.
func NewCmdMCP(io IO, runF func(*MCPOptions) error) *cobra.Command {
	opts := &MCPOptions{}
	cmd := &cobra.Command{
		Use:   "mcp --session <id>",
		Short: "Serve the sentinel MCP tools over stdio, forwarding to the running node",
		Long: `Serve the MCP tools (sentinel_watch, sentinel_list, inbox_wait, ...) over
stdio for MCP clients that spawn servers. Every tool call is forwarded to
the running node's API (found like every client verb: --url,
AGENTPROTO_URL, <home>/daemon.json; token from AGENTPROTO_TOKEN or
<home>/daemon-token). --session (default $AGENTPROTO_SESSION) is the
calling session: the default sessionId of sentinel_watch, follower of
session_follow, and inbox of inbox_read / inbox_wait.`,
		Example: `  {"command": "sentinel", "args": ["mcp", "--session", "s1"]}`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.ClientOptions = newClientOptions(io, cmd)
			opts.Session = sessionDefault(opts.Session)
			if runF != nil {
				return runF(opts)
			}
			c, err := opts.APIClient()
			if err != nil {
				return err
			}
			srv := mcp.NewServer(mcp.Services{
				Sentinels: apiclient.Sentinels{C: c},
				Follows:   apiclient.Follows{C: c},
				Inbox:     apiclient.Inboxes{C: c},
			}, mcp.Options{})
			if err := mcp.ServeStdio(cmd.Context(), srv, opts.Session, io.In, io.Out); err != nil {
				return &ExitError{Code: 1, Err: fmt.Errorf("mcp stdio: %w", err)}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&opts.Session, "session", "", "calling session id (default $"+EnvSession+")")
	cmd.Flags().String("url", "", "node URL (default $AGENTPROTO_URL, else <home>/daemon.json)")
	return cmd
}
