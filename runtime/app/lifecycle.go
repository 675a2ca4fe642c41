package app

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/agentproto/sentinel/runtime/cluster"
)

// Start waits for JetStream as long as ctx lasts (boot.go), provisions
// the bus and wires the runtime, re-attaches every active/orphaned
// sentinel, runs the until.at sweep, starts the delivery workers and the
// poll loop, and opens the node: its listener, serving since New, then
// serves the full handler and /readyz answers 200.
func (a *App) Start(ctx context.Context) error {
	if err := a.waitJetStream(ctx); err != nil {
		return err
	}
	if err := a.open(ctx); err != nil {
		return err
	}
	a.startedAt = a.now().UTC()
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	a.runCancel = cancel
	if a.Cluster != nil {
		// Join first: the start-up re-attach and sweep are once-per-cluster
		// work, done here only by the node that owns them.
		a.Cluster.Round(ctx)
		var cwg sync.WaitGroup
		cwg.Add(1)
		go func() { defer cwg.Done(); a.Cluster.Run(runCtx) }()
		a.push("cluster membership", func(context.Context) error { cancel(); cwg.Wait(); return nil })
		if err := a.servePollNow(runCtx); err != nil {
			return err
		}
	}
	if a.owner().OwnsJob(cluster.JobReconcile) {
		a.Sentinels.Reattach(ctx)
	}
	if a.owner().OwnsJob(cluster.JobExpiry) {
		if _, err := a.Sentinels.Expirer().Sweep(ctx); err != nil {
			a.Log.Warn("start-up expiry sweep failed", "err", err)
		}
	}
	releaseStartGarbage()
	// Subsystems (the sessions router, follows) start before the delivery
	// workers that route through them, and so stop after them.
	for _, s := range a.subsystems {
		if s.Start != nil {
			if err := s.Start(ctx); err != nil {
				return err
			}
		}
		if s.Stop != nil {
			a.push("subsystem", s.Stop)
		}
	}
	a.runStorageGuard(runCtx)
	if err := a.Workers.Start(ctx); err != nil {
		return err
	}
	a.push("delivery workers", func(context.Context) error { a.Workers.Stop(); return nil })
	a.wg.Add(4)
	go func() { defer a.wg.Done(); a.batches.Run(runCtx, time.Second) }() // digests whose window ended (every node; compare-and-set per window)
	go func() { defer a.wg.Done(); _ = a.Loop.Run(runCtx) }()
	go func() { defer a.wg.Done(); a.housekeeping(runCtx) }()
	go func() { defer a.wg.Done(); a.reconcile(runCtx) }()
	a.push("poll loop", func(context.Context) error { cancel(); a.wg.Wait(); return nil })
	a.gate.Open(a.handler)
	// Stopping stops HTTP here, before the runtime behind it (the step
	// New pushed then finds it stopped).
	a.push("http server", a.server.Shutdown)
	for _, s := range a.subsystems {
		if s.Drain != nil {
			drain := s.Drain
			a.push("drain streams", func(context.Context) error { drain(); return nil })
		}
	}
	a.started.Store(true)
	_, since := a.boot.get()
	a.Log.Info("sentinel node ready", "url", a.URL(), "home", a.Cfg.Home, "providers", a.Registry.Slugs(),
		"fsync_always", a.Cfg.NATS.SyncAlways, "boot", a.now().Sub(since).Round(time.Millisecond))
	return nil
}

// housekeeping refreshes gauges every 15 s (a scrape of /metrics also
// refreshes them first; see metrics.go).
func (a *App) housekeeping(ctx context.Context) {
	t := time.NewTicker(15 * time.Second)
	defer t.Stop()
	for {
		a.refreshGauges(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// reconcile asks push providers to recover lost deliveries at start and
// every ReconcileInterval.
func (a *App) reconcile(ctx context.Context) {
	every := a.Cfg.ReconcileInterval
	if every <= 0 {
		every = 5 * time.Minute
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if a.owner().OwnsJob(cluster.JobReconcile) {
			a.Sentinels.ReconcileAll(ctx)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Stop tears everything down in reverse order under the shutdown timeout.
// It is idempotent. Call it once Start has returned (Run does); a node
// still starting (waiting for its peers) is stopped by cancelling Start's
// ctx, after which Start returns and Stop finishes the job.
func (a *App) Stop(ctx context.Context) error {
	if !a.stopped.CompareAndSwap(false, true) {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, a.Cfg.ShutdownTimeout)
	defer cancel()
	return a.runTeardown(ctx)
}

func (a *App) runTeardown(ctx context.Context) error {
	var errs []error
	for i := len(a.teardown) - 1; i >= 0; i-- {
		s := a.teardown[i]
		a.Log.Debug("stopping", "step", s.name)
		if err := s.fn(ctx); err != nil {
			a.Log.Warn("stop step failed", "step", s.name, "err", err)
			errs = append(errs, fmt.Errorf("%s: %w", s.name, err))
		}
	}
	a.teardown = nil
	return errors.Join(errs...)
}

// Run starts the node and blocks until ctx ends, then stops it. A ctx
// that ends while the node is still starting (waiting for its peers)
// stops it cleanly: that is no failure.
func (a *App) Run(ctx context.Context) error {
	if err := a.Start(ctx); err != nil {
		_ = a.Stop(context.Background())
		if ctx.Err() != nil {
			a.Log.Info("stopped before it was ready", "why", err)
			return nil
		}
		return err
	}
	<-ctx.Done()
	a.Log.Info("shutting down")
	return a.Stop(context.Background())
}
