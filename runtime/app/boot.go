package app

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/agentproto/sentinel/bus"
	"github.com/agentproto/sentinel/ingress/api"
)

// bootPhase is where a node is on its way to ready (Start moves it on).
type bootPhase int

const (
	// phaseWaiting: no JetStream yet (an embedded cluster without a meta
	// leader, or an external deployment whose JetStream does not answer).
	phaseWaiting bootPhase = iota
	// phaseStarting: JetStream answers; provisioning and wiring.
	phaseStarting
)

// bootState is the node's phase until it is ready, and when it began to
// wait; Ready reads it while Start moves it.
type bootState struct {
	mu    sync.Mutex
	phase bootPhase
	since time.Time
}

func (b *bootState) set(p bootPhase) {
	b.mu.Lock()
	b.phase = p
	b.mu.Unlock()
}

func (b *bootState) get() (bootPhase, time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.phase, b.since
}

// metaPoll is how often a clustered node asks its own embedded server
// whether the meta group has a leader (in-process: costs nothing).
const metaPoll = 100 * time.Millisecond

// waitLogEvery is how often the wait for JetStream is logged.
const waitLogEvery = 5 * time.Second

// waitJetStream waits, for as long as ctx lasts, until JetStream answers:
// in an embedded cluster until the meta group has a leader, in external
// mode until the deployment's JetStream answers. A single node does not
// wait. The node is serving meanwhile (/healthz 200, /readyz 503
// waiting_for_peers): a node waiting for its peers is alive, so nothing
// here gives up. cluster.wait (2m) is when the wait turns into a warning,
// logged again every cluster.wait, not a deadline.
func (a *App) waitJetStream(ctx context.Context) error {
	if !a.Cfg.Cluster.Clustered() && !a.Cfg.NATS.External() {
		a.boot.set(phaseStarting)
		return nil
	}
	warnAfter := a.Cfg.Cluster.Wait
	if warnAfter <= 0 {
		warnAfter = DefaultClusterWait
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- a.jetStreamUp(wctx) }()
	tick := time.NewTicker(waitLogEvery)
	defer tick.Stop()
	warn := time.NewTimer(warnAfter)
	defer warn.Stop()
	for {
		select {
		case err := <-done:
			if err != nil {
				return fmt.Errorf("stopped while waiting for JetStream: %w", err)
			}
			a.boot.set(phaseStarting)
			_, since := a.boot.get()
			a.Log.Info("JetStream answers", "waited", a.now().Sub(since).Round(time.Millisecond))
			return nil
		case <-tick.C:
			nr := a.waiting()
			a.Log.Info("waiting for JetStream", "reason", nr.Reason, "detail", nr.Message)
		case <-warn.C:
			nr := a.waiting()
			a.Log.Warn("still waiting for JetStream after cluster.wait; the node keeps waiting (it is alive: /healthz 200)",
				"reason", nr.Reason, "waited", time.Duration(nr.WaitingMs)*time.Millisecond, "detail", nr.Message)
			warn.Reset(warnAfter)
		}
	}
}

// jetStreamUp returns once JetStream answers an account request (in an
// embedded cluster, first once its own server sees a meta leader), or with
// ctx's error.
func (a *App) jetStreamUp(ctx context.Context) error {
	if a.nats != nil {
		t := time.NewTicker(metaPoll)
		defer t.Stop()
		for !a.nats.MetaCurrent() {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-t.C:
			}
		}
	}
	return bus.WaitForJetStream(ctx, a.nc)
}

// waiting is the not-ready answer of a node in phaseWaiting.
func (a *App) waiting() *api.NotReady {
	_, since := a.boot.get()
	now := a.now()
	if a.nats == nil {
		return (&api.NotReady{Reason: api.ReasonWaitingForJetStream,
			Message: "connected to nats.url; waiting for the deployment's JetStream to answer (a meta leader: a majority of its servers up)"}).Waited(since, now)
	}
	var names []string
	if routes, err := a.nats.Routes(); err == nil {
		for _, r := range routes {
			names = append(names, r.Name)
		}
	}
	n := len(names)
	return (&api.NotReady{Reason: api.ReasonWaitingForPeers, Routes: &n, Peers: names,
		Message: fmt.Sprintf("waiting for the JetStream meta leader with routes up to %d other server(s): a new cluster elects it once every server "+
			"it expects runs (one per cluster.routes entry), a formed one once a majority does", n)}).Waited(since, now)
}
