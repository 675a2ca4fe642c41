package mcp

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/api"
)

// dryRun answers sentinel_watch with dryRun: what the watch would have
// matched in the journal; nothing is created.
func dryRun(ctx context.Context, svc api.Sentinels, wr sentinel.WatchRequest) *mcp.CallToolResult {
	dr, isDry := svc.(api.DryRunner)
	if !isDry {
		return fail(ToolWatch, sentinel.Errorf(sentinel.CodeNotImplemented, "this node cannot dry-run a watch"), nil)
	}
	res, err := dr.DryRun(ctx, wr, CallerFrom(ctx))
	if err != nil {
		return fail(ToolWatch, err, nil)
	}
	if res.Examples == nil {
		res.Examples = []api.DryRunExample{}
	}
	out := map[string]any{"dryRun": true, "matched": res.Matched, "scanned": res.Scanned, "examples": res.Examples,
		"since": res.Since, "provider": res.Provider, "spec": res.Spec}
	if res.Truncated {
		out["truncated"] = true
	}
	return ok(out)
}
