package app

import (
	"context"
	"fmt"
	"net/http"
	"sync"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/api"
	"github.com/agentproto/sentinel/ingress/mcpevents"
	"github.com/agentproto/sentinel/runtime/subscriptions"
)

// MCPEventsPrincipal is the principal id of MCP Events calls made with the
// node's own token (sentinel.OperatorID); a named token's calls are its
// own principal's ("token:<id>"), so its subscriptions and cursors are
// its alone.
const MCPEventsPrincipal = sentinel.OperatorID

// openMCPEvents provisions the MCP Events assets and builds the service
// behind events/* (runtime/subscriptions). Every node serves it: the
// subscriptions, the feeds and the cursor key are in JetStream.
func (a *App) openMCPEvents(ctx context.Context) error {
	m, err := subscriptions.OpenAssets(ctx, a.Bus, a.Cfg.MCPEvents.Retention)
	if err != nil {
		return err
	}
	interval := a.Cfg.Poll.ActiveInterval
	a.MCPEvents, err = subscriptions.New(subscriptions.NewStore(m.KV), subscriptions.NewFeed(a.Bus, m), subscriptions.NewCursors(m.KV), a.Sentinels,
		subscriptions.WithConfig(a.Cfg.MCPEvents), subscriptions.WithCadence(func() int64 { return interval.Milliseconds() }),
		subscriptions.WithLogger(a.Log.With("component", "mcp-events")), subscriptions.WithClock(a.now), subscriptions.WithPause(a.pause))
	if err != nil {
		return fmt.Errorf("mcp events: %w", err)
	}
	return nil
}

// wireMCPEvents runs the subscription sweeper (and the webhook dispatcher)
// with the node.
func (a *App) wireMCPEvents() subsystem {
	var (
		cancel context.CancelFunc
		wg     sync.WaitGroup
	)
	return subsystem{
		Start: func(ctx context.Context) error {
			var rctx context.Context
			rctx, cancel = context.WithCancel(context.WithoutCancel(ctx))
			wg.Add(1)
			go func() { defer wg.Done(); a.MCPEvents.RunSweeper(rctx) }()
			if w := a.MCPEvents.Webhooks(); w != nil {
				if err := w.Start(rctx, &wg); err != nil {
					cancel()
					return err
				}
			}
			return nil
		},
		Stop: func(context.Context) error {
			if cancel != nil {
				cancel()
			}
			wg.Wait()
			return nil
		},
	}
}

// mcpEventsWrap is the MCP Events layer of /mcp.
func (a *App) mcpEventsWrap(life context.Context) func(http.Handler) http.Handler {
	d := mcpevents.NewServer(scopedMCPEvents{a.MCPEvents}, mcpevents.WithLife(life), mcpevents.WithLogger(a.Log.With("component", "mcp-events")), mcpevents.WithStreams(a.streams))
	opts := mcpevents.HTTPOptions{Principal: func(r *http.Request) string { return api.PrincipalFrom(r.Context()).ID }}
	return func(next http.Handler) http.Handler { return mcpevents.Handler(next, d, opts) }
}
