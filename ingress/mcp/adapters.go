package mcp

import (
	"context"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/api"
)

// Tool names of the adapter group.
const (
	ToolAdapters = "list_sentinel_adapters"
	ToolSetup    = "setup_sentinel_provider"
)

// SetupArgs are the setup_sentinel_provider arguments.
type SetupArgs struct {
	Slug   string            `json:"slug" jsonschema_description:"Provider slug (see list_sentinel_adapters)."`
	Fields map[string]string `json:"fields" jsonschema_description:"Setup field values by name (see the provider's setupFields). Sensitive values are stored 0600 and never echoed."`
}

func adapterTools(svc api.Sentinels) []server.ServerTool {
	return []server.ServerTool{
		{
			Tool: mcp.NewTool(ToolAdapters,
				mcp.WithDescription("List every sentinel provider, built-in or a discovered third-party adapter, with its status (ready, available, or unavailable for an adapter that does not start or fails its handshake), version, declared capabilities and setup fields. A provider that is not ready says why in info.readiness; an unavailable one in info.unavailable."),
				inputSchema[NoArgs](),
				annotations("List sentinel providers", true, false, true, false),
			),
			Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				if err := bind(req, &NoArgs{}); err != nil {
					return fail(ToolAdapters, err, nil), nil
				}
				as, err := svc.Adapters(ctx)
				if err != nil {
					return fail(ToolAdapters, err, nil), nil
				}
				if as == nil {
					as = []api.Adapter{}
				}
				return ok(map[string]any{"adapters": as}), nil
			},
		},
		{
			Tool: mcp.NewTool(ToolSetup,
				mcp.WithDescription("Configure a provider that declares setup fields (e.g. agentpush's apiKey). Returns the names of the stored fields and the provider's readiness; values are never echoed. Endpoint fields (a URL the provider sends credentials to, such as baseUrl) are operator settings and are refused here: the operator sets them with `sentinel setup`."),
				inputSchema[SetupArgs](),
				annotations("Set up a sentinel provider", false, true, true, false),
			),
			Handler: typed(ToolSetup, func(ctx context.Context, a SetupArgs) *mcp.CallToolResult {
				slug := strings.TrimSpace(a.Slug)
				if slug == "" {
					return invalid(ToolSetup, "slug is required (a provider slug from list_sentinel_adapters)")
				}
				if len(a.Fields) == 0 {
					return invalid(ToolSetup, "fields is required: an object of setup field values by name")
				}
				if err := refuseEndpoints(ctx, svc, slug, a.Fields); err != nil {
					return fail(ToolSetup, err, nil)
				}
				res, err := svc.Setup(ctx, slug, a.Fields)
				if err != nil {
					return fail(ToolSetup, err, nil)
				}
				return ok(map[string]any{"setup": res})
			}),
		},
	}
}

// refuseEndpoints refuses, with endpoint_operator_only, a setup through
// MCP that gives any endpoint field of the provider (a URL it sends
// credentials to, agentpush's baseUrl): an MCP client is an agent, and a
// prompt-injected agent must not point a provider at its own server.
// Endpoints are operator settings (`sentinel setup`, the API, with an
// admin token). A provider the listing does not name is left to Setup's
// own error.
func refuseEndpoints(ctx context.Context, svc api.Sentinels, slug string, fields map[string]string) error {
	as, err := svc.Adapters(ctx)
	if err != nil {
		return err
	}
	for _, a := range as {
		if a.Slug != slug {
			continue
		}
		for _, f := range a.SetupFields {
			if _, given := fields[f.Name]; given && f.Endpoint {
				return sentinel.Errorf(api.CodeEndpointOperatorOnly,
					"%s is an endpoint of %s (where it sends its credentials): an operator setting, not settable through MCP; the operator runs `sentinel setup %s --field %s=<url>`",
					f.Name, slug, slug, f.Name)
			}
		}
	}
	return nil
}
