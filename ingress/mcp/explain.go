package mcp

import (
	"context"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/api"
)

// ToolExplain is the decision journal's tool.
const ToolExplain = "sentinel_explain"

// ExplainArgs are the sentinel_explain arguments.
type ExplainArgs struct {
	ID      string `json:"id,omitempty" jsonschema_description:"Sentinel id (sen_...): its recent decisions. Give id, eventId or both."`
	EventID string `json:"eventId,omitempty" jsonschema_description:"Event id: the event's whole story (when it was received, from which provider, every sentinel's decision and where it went)."`
	Limit   int    `json:"limit,omitempty" jsonschema_description:"At most this many recent decisions of the sentinel (1..1000, default 20)."`
}

func explainTools(svc api.Explainer) []server.ServerTool {
	return []server.ServerTool{{
		Tool: mcp.NewTool(ToolExplain,
			mcp.WithDescription("Explain what the node did with events: a sentinel's recent decisions (delivered, filtered with the clause that failed, duplicate, post-mortem, dead-target, retrying, self...) or the whole story of one event. Answers why a session did or did not hear about something."),
			inputSchema[ExplainArgs](),
			annotations("Explain decisions", true, false, true, false),
		),
		Handler: typed(ToolExplain, func(ctx context.Context, a ExplainArgs) *mcp.CallToolResult {
			id, eventID := strings.TrimSpace(a.ID), strings.TrimSpace(a.EventID)
			if id == "" && eventID == "" {
				return invalid(ToolExplain, "give id (a sentinel id from sentinel_list), eventId, or both")
			}
			if a.Limit < 0 || a.Limit > 1000 {
				return invalid(ToolExplain, "limit must be within 1..1000")
			}
			if eventID != "" {
				story, err := svc.Event(ctx, eventID)
				if err != nil {
					return fail(ToolExplain, err, nil)
				}
				if id != "" {
					mine := story.Decisions[:0:0]
					for _, d := range story.Decisions {
						if d.SentinelID == id {
							mine = append(mine, d)
						}
					}
					story.Decisions = mine
				}
				return ok(map[string]any{"event": story})
			}
			limit := a.Limit
			if limit == 0 {
				limit = 20
			}
			page, err := svc.Decisions(ctx, id, limit, 0)
			if err != nil {
				return fail(ToolExplain, err, notFound)
			}
			if page.Decisions == nil {
				page.Decisions = []sentinel.Decision{}
			}
			return ok(map[string]any{"sentinelId": id, "decisions": page.Decisions, "next": page.Next})
		}),
	}}
}
