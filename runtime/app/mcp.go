package app

import (
	"context"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/agentproto/sentinel/ingress"
	"github.com/agentproto/sentinel/ingress/mcp"
)

// MCPPath is where the node serves MCP over streamable HTTP.
const MCPPath = "/mcp"

// wireMCP wires the MCP surface: streamable HTTP at /mcp, behind the bearer
// token (a Raw route: long calls allowed; the transport caps POST bodies at
// max_body_bytes itself). The tools call
// the same in-process services as the REST routes. Long calls (inbox_wait)
// end as soon as the start context ends (the signal context of `sentinel
// serve`), before the HTTP server drains, or at the latest when the
// subsystem stops.
func (a *App) wireMCP(w *sessionWiring) subsystem {
	life, cancel := context.WithCancel(context.Background())
	log := a.Log.With("component", "mcp")
	srv := mcp.NewServer(a.mcpServices(w), mcp.Options{Life: life, Debug: a.Log.With("component", "mcp")})
	h := mcp.HTTPHandler(srv, log, a.Cfg.MaxBodyBytes, a.mcpEventsWrap(life))
	return subsystem{
		Raw: []ingress.Mounter{func(r chi.Router) {
			for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodDelete, http.MethodHead} {
				r.Method(m, MCPPath, h)
			}
		}},
		Start: func(ctx context.Context) error { context.AfterFunc(ctx, cancel); return nil },
		Stop:  func(context.Context) error { cancel(); return nil },
	}
}

// mcpServices are the in-process services behind the MCP tools: the
// same adapters the REST routes call.
func (a *App) mcpServices(w *sessionWiring) mcp.Services {
	_, inboxes, follows := sessionServices(w)
	return mcp.Services{
		Sentinels: a.sentinelsAPI(),
		Follows:   follows,
		Inbox:     inboxes,
		Explainer: a.explainerAPI(),
		Streams:   a.streams,
	}
}
