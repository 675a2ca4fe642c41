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
// token (a Raw route: no body limit, long calls allowed). The tools call
// the same in-process services as the REST routes. Long calls end when the
// subsystem stops.
func (a *App) wireMCP() subsystem {
	life, cancel := context.WithCancel(context.Background())
	srv := mcp.NewServer(a.mcpServices(), mcp.Options{Log: a.Log.With("component", "mcp")})
	h := mcp.HTTPHandler(life, srv, a.Log.With("component", "mcp"))
	return subsystem{
		Raw: []ingress.Mounter{func(r chi.Router) {
			for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodDelete, http.MethodHead} {
				r.Method(m, MCPPath, h)
			}
		}},
		Stop: func(context.Context) error { cancel(); return nil },
	}
}

// mcpServices are the in-process services behind the MCP tools.
func (a *App) mcpServices() mcp.Services {
	return mcp.Services{
		Sentinels: sentinelAPI{svc: a.Sentinels, park: a.Park},
	}
}
