package app

import (
	"context"

	"github.com/agentproto/sentinel/ingress"
	"github.com/agentproto/sentinel/runtime/deliver"
	"github.com/agentproto/sentinel/runtime/sentinels"
)

// subsystem is what an optional part of the node (sessions and follows,
// MCP) adds to it: a delivery router, a session checker for sentinel
// creation, routes, and a start/stop pair run with the node.
type subsystem struct {
	Router  deliver.Router
	Checker sentinels.SessionChecker
	// API routes sit behind the bearer token and the body limit; Raw routes
	// behind the bearer token only (long-polls, streams, MCP).
	API   []ingress.Mounter
	Raw   []ingress.Mounter
	Start func(ctx context.Context) error
	Stop  func(ctx context.Context) error
}

// wireSessions wires the session registry, inboxes, dead-target routing,
// follows and PR auto-link. Until that subsystem exists the node delivers
// straight into inboxes.
func (a *App) wireSessions() subsystem { return subsystem{} }
