package app

import (
	"github.com/nats-io/nats.go/jetstream"

	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/agentproto/sentinel/ingress"
	"github.com/agentproto/sentinel/ingress/api"
	"github.com/agentproto/sentinel/ingress/httpapi"
	"github.com/agentproto/sentinel/runtime/cluster"
	"github.com/agentproto/sentinel/runtime/deliver"
	"github.com/agentproto/sentinel/runtime/follow"
	"github.com/agentproto/sentinel/runtime/inbox"
	"github.com/agentproto/sentinel/runtime/sessions"
)

// subsystem is what an optional part of the node (sessions and follows,
// MCP) adds to it: a delivery router, routes, and a start/stop pair run
// with the node.
type subsystem struct {
	Router deliver.Router
	// Append, when set, stores a message and wakes its session (the
	// digests of sentinels with a batchMs go through it).
	Append inbox.AppendFunc
	// API routes sit behind the bearer token and the body limit; Raw routes
	// behind the bearer token only (long-polls, streams, MCP).
	API   []ingress.Mounter
	Raw   []ingress.Mounter
	Start func(ctx context.Context) error
	Stop  func(ctx context.Context) error
	// Drain runs when the node starts stopping, before the HTTP server
	// drains (ends streams and long-polls that would hold the drain).
	Drain func()
	// sessions is set on the sessions subsystem: its in-process services.
	sessions *sessionWiring
}

// sessionWiring holds the session subsystem's components.
type sessionWiring struct {
	// lifecycle is the lifecycle stream the follow engine consumes.
	lifecycle jetstream.Stream
	registry  *sessions.Registry
	inboxes   *sessions.Inboxes
	notifier  *sessions.Notifier
	homes     *sessions.Homes // nil on a single node
	autolink  *sessions.AutoLink
	engine    *follow.Engine
	follows   *follow.Store

	stopOnce sync.Once
	prunedAt time.Time // the last prune (the sweep goroutine only)
	cancel   context.CancelFunc
	wg       sync.WaitGroup
}

// HeartbeatSweepInterval is how often lapsed heartbeats are turned into
// crashes.
const HeartbeatSweepInterval = 15 * time.Second

// sessionStores are the session registry and the stores under it, opened
// before the sentinel service (which asks the registry about a session).
type sessionStores struct {
	stores   *sessions.Stores
	follows  jetstream.KeyValue
	registry *sessions.Registry
	log      *slog.Logger
}

// openSessions provisions the session stores and builds the registry.
func (a *App) openSessions(ctx context.Context) (sessionStores, error) {
	b, now := a.Bus, a.now
	st, err := sessions.OpenStores(ctx, b, b.Cfg)
	if err != nil {
		return sessionStores{}, err
	}
	follows, err := b.EnsureKeyValue(ctx, follow.BucketConfig())
	if err != nil {
		return sessionStores{}, err
	}
	log := a.Log.With("component", "sessions")
	reg := sessions.NewRegistry(b, st.Sessions, sessions.WithRegistryClock(now), sessions.WithRegistryLogger(log), sessions.WithRegistryNode(a.Cfg.Node.Name))
	return sessionStores{stores: st, follows: follows, registry: reg, log: log}, nil
}

// wireSessions wires, over the registry, the inboxes, dead-target
// routing, notify and resume hooks, follows and PR auto-link.
func (a *App) wireSessions(sst sessionStores) (subsystem, error) {
	b, now := a.Bus, a.now
	st, follows, reg, log := sst.stores, sst.follows, sst.registry, sst.log
	runner := sessions.NewHookRunner(sessions.WithHookNode(a.Cfg.Node.Name))
	notifier := sessions.NewNotifier(reg, runner, sessions.WithNotifierLogger(log))
	inboxes := sessions.NewInboxes(st.Cursors, a.Inbox, reg, notifier)
	resolverOpts := []sessions.ResolverOption{sessions.WithResolverLogger(log)}
	if a.Cluster != nil {
		// One resume hook of a session at a time in the cluster (issue 21,
		// item 8): URL hooks run on whichever node has the event.
		resolverOpts = append(resolverOpts, sessions.WithResolverLocks(b.NewLocker(a.Cfg.Node.Name)))
	}
	resolver := sessions.NewResolver(reg, runner, resolverOpts...)
	var homes *sessions.Homes
	if a.Cluster != nil {
		// Command hooks run on the session's home node (docs/harness.md):
		// NewHomes attaches itself to the notifier and the resolver.
		homes = sessions.NewHomes(b, a.Cfg.Node.Name, notifier, resolver, sessions.WithHomesLogger(log.With("component", "homes")))
	}
	autolink := sessions.NewAutoLink(a.Sentinels, sessions.WithAutoLinkEnabled(a.autoWatchPRs), sessions.WithAutoLinkLogger(log.With("component", "autolink")))
	reg.SetPRHook(autolink.PROpened)
	router := sessions.NewRouter(resolver, inboxes.Append, a.Park, sessions.WithRouterInbox(a.Inbox), sessions.WithRouterLogger(log), sessions.WithRouterClock(now),
		sessions.WithMerged(func(ctx context.Context, sessionID, prURL string) {
			if err := reg.RecordPR(ctx, sessionID, prURL, sessions.PRMerged, ""); err != nil {
				log.Warn("recording a merged PR failed", "session", sessionID, "pr", prURL, "err", err)
			}
		}))
	store := follow.NewStore(follows, follow.WithStoreBus(b))
	engineOpts := []follow.Option{follow.WithLogger(a.Log.With("component", "follows")), follow.WithMetrics(a.Metrics), follow.WithConsumers(a.Bus)}
	if a.Cluster != nil {
		// One node of a cluster consumes the lifecycle stream at a time.
		engineOpts = append(engineOpts, follow.WithOwnership(func() bool { return a.Cluster.OwnsJob(cluster.JobFollowDigests) }))
	}
	engine, err := follow.NewEngine(follow.Deps{Store: store, Registry: reg, Resolver: resolver, Append: inboxes.Append, Park: a.Park}, engineOpts...)
	if err != nil {
		return subsystem{}, err
	}
	w := &sessionWiring{lifecycle: st.Lifecycle, registry: reg, inboxes: inboxes, notifier: notifier, homes: homes, autolink: autolink, engine: engine, follows: store}
	sapi, iapi, fapi := scopedSessions{sessionsAPI{reg: reg}}, scopedInboxes{inboxesAPI{svc: inboxes}}, scopedFollows{followsAPI{engine: engine}}
	return subsystem{
		Router: router,
		Append: inboxes.Append,
		API: []ingress.Mounter{func(r chi.Router) {
			httpapi.SessionRoutes(r, sapi)
			httpapi.InboxRoutes(r, iapi)
			httpapi.FollowRoutes(r, fapi)
		}},
		Raw: []ingress.Mounter{func(r chi.Router) {
			httpapi.InboxReadRoutes(r, iapi, httpapi.StreamConfig{Limiter: a.streams})
		}},
		Start: func(ctx context.Context) error { return w.start(ctx, a) },
		Stop:  func(context.Context) error { w.stop(); return nil },
		// Open inbox streams and long-polls end before the HTTP server
		// drains, or the drain would wait for them.
		Drain:    w.inboxes.Close,
		sessions: w,
	}, nil
}

// start runs the notify workers, the home node's hook jobs and resume
// answers (in a cluster), the follow consumer and the heartbeat sweep.
func (w *sessionWiring) start(ctx context.Context, a *App) error {
	w.notifier.Start()
	if w.homes != nil {
		if err := w.homes.Start(ctx); err != nil {
			w.notifier.Stop()
			return err
		}
	}
	if err := w.engine.Start(ctx, w.lifecycle); err != nil {
		w.homes.Stop()
		w.notifier.Stop()
		return err
	}
	life, cancel := context.WithCancel(context.WithoutCancel(ctx))
	w.cancel = cancel
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		t := time.NewTicker(HeartbeatSweepInterval)
		defer t.Stop()
		for {
			select {
			case <-life.Done():
				return
			case <-t.C:
				if _, err := w.registry.Sweep(life); err != nil {
					a.Log.Warn("heartbeat sweep failed", "err", err)
				}
				w.prune(life, a)
			}
		}
	}()
	return nil
}

// prune drops, at most once per sessions.PruneEvery and on the expiry
// job's owner only, the sessions ended longer ago than
// sessions.EndedRetention and the inbox read cursors older than
// bus.inbox_max_age (issue 21, item 10).
func (w *sessionWiring) prune(ctx context.Context, a *App) {
	if a.Cluster != nil && !a.Cluster.OwnsJob(cluster.JobExpiry) {
		return
	}
	now := a.now()
	if now.Sub(w.prunedAt) < sessions.PruneEvery {
		return
	}
	w.prunedAt = now
	if n, err := w.registry.PruneEnded(ctx, sessions.EndedRetention); err != nil {
		a.Log.Warn("pruning ended sessions failed", "err", err)
	} else if n > 0 {
		a.Log.Info("ended sessions pruned", "sessions", n)
	}
	if _, err := w.inboxes.PruneCursors(ctx, time.Now(), a.Cfg.Bus.InboxMaxAge); err != nil {
		a.Log.Warn("pruning inbox read cursors failed", "err", err)
	}
}

// stop ends streams, stops the sweep, flushes pending digests and waits
// for auto-links, hook jobs and notify hooks. Idempotent.
func (w *sessionWiring) stop() {
	w.stopOnce.Do(func() {
		w.inboxes.Close()
		if w.cancel != nil {
			w.cancel()
		}
		w.wg.Wait()
		w.engine.Stop()
		w.autolink.Stop()
		w.homes.Stop()
		w.notifier.Stop()
	})
}

// sessionServices returns the in-process session, inbox and follow
// services of a wiring (for the MCP surface), as the request's principal
// may use them (scope.go).
func sessionServices(w *sessionWiring) (api.Sessions, api.Inboxes, api.Follows) {
	return scopedSessions{sessionsAPI{reg: w.registry}}, scopedInboxes{inboxesAPI{svc: w.inboxes}}, scopedFollows{followsAPI{engine: w.engine}}
}
