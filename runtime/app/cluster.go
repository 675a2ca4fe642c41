package app

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/agentproto/sentinel/runtime/cluster"
)

// pollNowSubject carries cluster-wide poll-now requests: every node polls
// the sentinels it owns and answers.
const pollNowSubject = "sentinel.control.pollnow"

func (a *App) newClusterNode(cfg Config) *cluster.Node {
	ccfg := cluster.DefaultConfig(a.Bus.Cfg.MemberTTL, a.Bus.Cfg.LeaseTTL)
	opts := []cluster.Option{cluster.WithLogger(a.Log.With("component", "cluster")), cluster.WithClock(a.now), cluster.WithAdapters(a.adapterStates),
		// A poll partition taken over (from a dead node, or at a join) is
		// polled at once, not at the next tick: the handover costs the
		// lease's lapse, not a tick more. The poll loop is built after the
		// node (it polls what the node owns), so this reads it when called.
		cluster.WithOnAcquire(func(item string) {
			if !cluster.IsPollItem(item) || a.Loop == nil {
				return
			}
			a.Loop.KickKeys(func(key string) bool {
				return cluster.PollItem(cluster.PollPartition(key, ccfg.PollPartitions)) == item
			})
		})}
	client := ""
	if a.nats != nil {
		client = a.nats.ClientURL()
		srv := a.nats
		opts = append(opts, cluster.WithInMajority(func() bool { in, _ := srv.InMajority(); return in }))
	}
	opts = append(opts, cluster.WithURLs(a.URL(), client))
	return cluster.New(cfg.Node.Name, a.clusterKV.Nodes, a.clusterKV.Leases, ccfg, opts...)
}

// owner is the node's ownership: the cluster's, or a single node's (all).
func (a *App) owner() cluster.Ownership {
	if a.Cluster == nil {
		return cluster.Solo{}
	}
	return a.Cluster
}

type pollNowAnswer struct {
	Node string `json:"node"`
}

// servePollNow answers cluster-wide poll-now requests with a local tick.
func (a *App) servePollNow(ctx context.Context) error {
	stop, err := a.Bus.Serve(pollNowSubject, func(_ []byte, reply func([]byte)) {
		pctx, cancel := context.WithTimeout(ctx, a.Cfg.Poll.PollTimeout)
		defer cancel()
		a.Loop.PollNow(pctx)
		raw, _ := json.Marshal(pollNowAnswer{Node: a.Cfg.Node.Name})
		reply(raw)
	})
	if err != nil {
		return fmt.Errorf("cluster: subscribe to poll-now: %w", err)
	}
	a.push("poll-now subscription", func(context.Context) error { return stop() })
	return nil
}

// clusterPoller polls every pollable sentinel of the cluster once: it asks
// every live node (each polls what it owns) and waits, bounded, for their
// answers.
type clusterPoller struct{ a *App }

func (p clusterPoller) PollNow(ctx context.Context) {
	a := p.a
	want := len(a.Cluster.LiveMembers())
	if want == 0 {
		want = 1
	}
	wctx, cancel := context.WithTimeout(ctx, a.Cfg.Poll.PollTimeout+5*time.Second)
	defer cancel()
	got, err := a.Bus.RequestAll(wctx, pollNowSubject, nil, want, nil)
	if err != nil {
		a.Loop.PollNow(ctx)
		return
	}
	if got < want && ctx.Err() == nil {
		a.Log.Warn("poll now: not every node answered", "answered", got, "members", want)
	}
}
