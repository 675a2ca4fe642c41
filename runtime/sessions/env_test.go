package sessions_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/runtime/deliver"
	"github.com/agentproto/sentinel/runtime/runtimetest"
	"github.com/agentproto/sentinel/runtime/sentinels"
	"github.com/agentproto/sentinel/runtime/sessions"
)

// proxyRouter lets the test build the sessions router after the runtime
// (and its bus) exists.
type proxyRouter struct {
	r atomic.Pointer[sessions.Router]
}

func (p *proxyRouter) Route(ctx context.Context, rec *sentinel.Sentinel, ev *sentinel.Event) (deliver.Outcome, error) {
	return p.r.Load().Route(ctx, rec, ev)
}

func (p *proxyRouter) Plan(ctx context.Context, rec *sentinel.Sentinel, ev *sentinel.Event) (deliver.Send, error) {
	return p.r.Load().Plan(ctx, rec, ev)
}

func (p *proxyRouter) Prepare(rec *sentinel.Sentinel, ev *sentinel.Event) (deliver.Send, error) {
	return p.r.Load().Prepare(rec, ev)
}

type env struct {
	*runtimetest.Env
	Reg      *sessions.Registry
	Inboxes  *sessions.Inboxes
	Notifier *sessions.Notifier
	Resolver *sessions.Resolver
	Router   *sessions.Router
	// reject, when set, makes every append fail with session_not_alive.
	reject atomic.Bool
}

func newEnv(t *testing.T, extra ...providers.Provider) *env {
	t.Helper()
	return newEnvWith(t, runtimetest.Options{Extra: extra})
}

// newEnvWith is newEnv with the runtime's options (its Router is the
// sessions router) and the resolver's.
func newEnvWith(t *testing.T, o runtimetest.Options, ropts ...resolverOpt) *env {
	t.Helper()
	p := &proxyRouter{}
	o.Router = p
	return wireEnv(t, runtimetest.Start(t, o), p, ropts...)
}

// joinEnv wires a second node on a's JetStream (runtimetest.Join) with a
// registry, inboxes, notifier, resolver and router of its own.
func joinEnv(t *testing.T, a *env, o runtimetest.Options, ropts ...resolverOpt) *env {
	t.Helper()
	p := &proxyRouter{}
	o.Router = p
	return wireEnv(t, runtimetest.Join(t, a.Env, o), p, ropts...)
}

// resolverOpt is a resolver option over the node's runtime (its bus).
type resolverOpt func(rt *runtimetest.Env) sessions.ResolverOption

// clusterLocks serializes the node's resumes with the cluster's resume
// lock, owned by owner (as runtime/app sets it on every node of a
// cluster).
func clusterLocks(owner string) resolverOpt {
	return func(rt *runtimetest.Env) sessions.ResolverOption {
		return sessions.WithResolverLocks(rt.Bus.Bus.NewLocker(owner))
	}
}

func wireEnv(t *testing.T, rt *runtimetest.Env, p *proxyRouter, ropts ...resolverOpt) *env {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	b := rt.Bus.Bus
	e := &env{Env: rt}
	e.Reg = sessions.NewRegistry(b, storesOf(t, b).Sessions, sessions.WithRegistryClock(rt.Clock.Now), sessions.WithRegistryLogger(log), sessions.WithRegistryPause(rt.Pause))
	runner := sessions.NewHookRunner()
	e.Notifier = sessions.NewNotifier(e.Reg, runner, sessions.WithNotifierLogger(log))
	e.Notifier.Start()
	t.Cleanup(e.Notifier.Stop)
	e.Inboxes = sessions.NewInboxes(storesOf(t, b).Cursors, rt.Inbox, e.Reg, e.Notifier)
	e.Inboxes.Pause = rt.Pause
	resolverOpts := []sessions.ResolverOption{sessions.WithResolverLogger(log), sessions.WithResolverPause(rt.Pause)}
	for _, o := range ropts {
		resolverOpts = append(resolverOpts, o(rt))
	}
	e.Resolver = sessions.NewResolver(e.Reg, runner, resolverOpts...)
	appendFn := func(ctx context.Context, m sentinel.Message) (sentinel.Message, bool, error) {
		if e.reject.Load() {
			return sentinel.Message{}, false, sentinel.Errorf(sentinel.CodeSessionNotAlive, "session %q is not alive", m.To)
		}
		return e.Inboxes.Append(ctx, m)
	}
	e.Router = sessions.NewRouter(e.Resolver, appendFn, rt.Park, sessions.WithRouterInbox(rt.Inbox), sessions.WithRouterLogger(log), sessions.WithRouterClock(rt.Clock.Now),
		sessions.WithMerged(func(ctx context.Context, id, url string) {
			_ = e.Reg.RecordPR(ctx, id, url, sessions.PRMerged, "")
		}))
	p.r.Store(e.Router)
	rt.Service = rt.NewService(sentinels.WithSessions(sessions.NewChecker(e.Reg)))
	return e
}

func (e *env) register(t *testing.T, in sentinel.RegisterSession) sessions.Session {
	t.Helper()
	s, _, err := e.Reg.Register(context.Background(), in)
	require.NoError(t, err)
	return s
}

func ptr[T any](v T) *T { return &v }

// lifecycle returns every event on the lifecycle stream, oldest first.
func (e *env) lifecycle(t *testing.T) []sessions.LifecycleEvent {
	t.Helper()
	ctx := context.Background()
	cons, err := storesOf(t, e.Bus.Bus).Lifecycle.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
	require.NoError(t, err)
	var out []sessions.LifecycleEvent
	for {
		batch, err := cons.FetchNoWait(100)
		require.NoError(t, err)
		n := 0
		for m := range batch.Messages() {
			n++
			var ev sessions.LifecycleEvent
			require.NoError(t, json.Unmarshal(m.Data(), &ev))
			out = append(out, ev)
		}
		if n == 0 {
			return out
		}
	}
}

func kinds(evs []sessions.LifecycleEvent, session string) []string {
	var out []string
	for _, ev := range evs {
		if ev.SessionID == session {
			out = append(out, ev.Kind)
		}
	}
	return out
}
