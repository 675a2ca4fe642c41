package cli

import (
	"context"
	"fmt"
	stdio "io"
	"net/http"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/apiclient"
	"github.com/agentproto/sentinel/ingress/mcp"
	"github.com/agentproto/sentinel/ingress/mcpevents"
)

// MCPOptions are the options of `sentinel mcp`.
type MCPOptions struct {
	ClientOptions
	Session string
	// Channel makes the server a Claude Code channel (mcp_channel.go).
	Channel bool
}

// NewCmdMCP builds `sentinel mcp --session <id>`: a stdio MCP server
// whose tools call the running node's REST API.
func NewCmdMCP(io IO) *cobra.Command {
	opts := &MCPOptions{}
	cmd := &cobra.Command{
		Use:   "mcp --session <id>",
		Short: "Serve the sentinel MCP tools over stdio, forwarding to the running node",
		Long: `Serve the MCP tools (sentinel_watch, sentinel_list, inbox_wait, ...) over
stdio for MCP clients that spawn servers. Every tool call is forwarded to
the running node's API (found like every client verb: --url,
AGENTPROTO_URL, <home>/daemon.json; token from AGENTPROTO_TOKEN or
<home>/daemon-token; a comma list of node URLs fails over between them,
see docs/cli.md). --session (default $AGENTPROTO_SESSION) is the
calling session: the default sessionId of sentinel_watch, follower of
session_follow, and inbox of inbox_read / inbox_wait. With --session auto
the calling session is looked up at every call: the most recently seen
live session registered with this process's working directory (how an MCP
client that spawns servers in the project folder, such as Claude Code,
finds the session its hooks registered).

--channel makes the server a Claude Code channel: it declares the
experimental capability claude/channel and, once the client is
initialized, sends a notifications/claude/channel notification for each
new message of the session's inbox (content: the message rendered and
escaped as the hooks render it; meta: seq, message_id, urgency,
correlation_id, sentinel_id, event_id, event_type, link). It keeps its
own cursor in the node (per session and channel), advanced past each
message once its notification was written, so a restarted Claude Code
sees nothing twice and misses nothing; the hooks' read cursor is not
moved (run them with --deliver=false to have the channel alone deliver).
See docs/harness.md.`,
		Example: `  {"command": "sentinel", "args": ["mcp", "--session", "s1"]}
  {"command": "sentinel", "args": ["mcp", "--session", "auto", "--channel"]}`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.ClientOptions = newClientOptions(io, cmd)
			opts.Session = sessionDefault(opts.Session)
			c, err := opts.APIClient()
			if err != nil {
				return err
			}
			mopts := mcp.Options{}
			caller := opts.Session
			cwd, _ := os.Getwd()
			if caller == SessionAuto {
				caller = ""
				sessions := apiclient.Sessions{C: c}
				mopts.Caller = func(ctx context.Context) string { return sessionForCwd(ctx, sessions, cwd) }
			}
			in, out := io.In, io.Out
			if opts.Channel {
				if opts.Session == "" {
					return usageError("--channel needs the session whose inbox it delivers: --session <id> (or auto), or %s", EnvSession)
				}
				if opts.Session != SessionAuto && !sentinel.ValidSessionID(opts.Session) {
					return usageError("session id %q is invalid", opts.Session)
				}
				mopts.Experimental = map[string]any{ChannelCapability: map[string]any{}}
				mopts.Instructions = channelInstructions
				lw := &lockedWriter{w: io.Out}
				var initialized <-chan struct{}
				in, initialized = watchInitialized(io.In)
				out = lw
				sessionOf := func(context.Context, *apiclient.Client) string { return opts.Session }
				if opts.Session == SessionAuto {
					sessionOf = func(ctx context.Context, c *apiclient.Client) string {
						return sessionForCwd(ctx, apiclient.Sessions{C: c}, cwd)
					}
				}
				// The channel ends with the server, and is waited for: a
				// notification it wrote has its cursor advanced before exit.
				chctx, stop := context.WithCancel(cmd.Context())
				chdone := make(chan struct{})
				go func() {
					defer close(chdone)
					runChannel(chctx, sessionOf, opts.APIClient, initialized, lw, io.ErrOut)
				}()
				defer func() { stop(); <-chdone }()
			}
			srv := mcp.NewServer(mcp.Services{
				Sentinels: apiclient.Sentinels{C: c},
				Follows:   apiclient.Follows{C: c},
				Inbox:     apiclient.Inboxes{C: c},
				Explainer: apiclient.Explainer{C: c},
			}, mopts)
			// MCP Events (events/*) are relayed to the node's /mcp, where
			// they are served; a stream has no request timeout.
			fwd := &mcpevents.Forwarder{Token: c.Token, Client: &http.Client{Transport: c.HTTP.Transport}}
			for _, u := range c.URLs {
				fwd.URLs = append(fwd.URLs, u+"/mcp")
			}
			serve := func(ctx context.Context, in stdio.Reader, out stdio.Writer) error {
				return mcp.ServeStdio(ctx, srv, caller, in, out)
			}
			if err := mcpevents.ServeStdio(cmd.Context(), fwd, serve, in, out); err != nil {
				return &ExitError{Code: 1, Err: fmt.Errorf("mcp stdio: %w", err)}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&opts.Session, "session", "", "calling session id (default $"+EnvSession+")")
	cmd.Flags().BoolVar(&opts.Channel, "channel", false, "be a Claude Code channel: push each new inbox message of the session as a notifications/claude/channel")
	cmd.Flags().String("url", "", urlFlagUsage)
	return cmd
}

// SessionAuto, as --session, resolves the calling session by working
// directory at every call.
const SessionAuto = "auto"

// sessionForCwd returns the most recently seen live session registered
// with cwd ("" when none).
func sessionForCwd(ctx context.Context, sessions interface {
	List(ctx context.Context) ([]sentinel.Session, error)
}, cwd string) string {
	list, err := sessions.List(ctx)
	if err != nil {
		return ""
	}
	cwd = filepath.Clean(cwd)
	best, bestTs := "", int64(-1)
	for _, s := range list {
		if s.Status == "ended" || s.Cwd == "" || filepath.Clean(s.Cwd) != cwd {
			continue
		}
		if s.LastSeenTs > bestTs {
			best, bestTs = s.ID, s.LastSeenTs
		}
	}
	return best
}
