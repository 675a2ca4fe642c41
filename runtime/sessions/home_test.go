package sessions_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus/bustest"
	"github.com/agentproto/sentinel/runtime/sessions"
)

// peer is a second node's session components on the env's bus.
type peer struct {
	reg      *sessions.Registry
	notifier *sessions.Notifier
	resolver *sessions.Resolver
	inboxes  *sessions.Inboxes
	homes    *sessions.Homes
}

// newPeer wires the session components of a node called name on e's bus;
// serve starts its hook jobs and resume answers.
func newPeer(t *testing.T, e *env, name string, serve bool) *peer {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	b := e.Bus.Bus
	p := &peer{reg: sessions.NewRegistry(b, storesOf(t, b).Sessions, sessions.WithRegistryClock(e.Clock.Now), sessions.WithRegistryLogger(log), sessions.WithRegistryNode(name))}
	runner := sessions.NewHookRunner(sessions.WithHookNode(name))
	p.notifier = sessions.NewNotifier(p.reg, runner, sessions.WithNotifierLogger(log))
	p.resolver = sessions.NewResolver(p.reg, runner, sessions.WithResolverLogger(log))
	p.homes = sessions.NewHomes(b, name, p.notifier, p.resolver, sessions.WithHomesLogger(log))
	p.notifier.Start()
	t.Cleanup(p.notifier.Stop)
	p.inboxes = sessions.NewInboxes(storesOf(t, b).Cursors, e.Inbox, p.reg, p.notifier)
	if serve {
		require.NoError(t, p.homes.Start(context.Background()))
		t.Cleanup(p.homes.Stop)
	}
	return p
}

// nodeMarker returns a command hook that writes $SENTINEL_NODE to
// <dir>/<name> and a reader of what it wrote.
func nodeMarker(t *testing.T, name string) (*sentinel.Hook, func() string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), name)
	hook := &sentinel.Hook{Command: []string{"sh", "-c", `printf '%s\n' "$SENTINEL_NODE" >> "$0"`, file}}
	return hook, func() string { raw, _ := os.ReadFile(file); return string(raw) }
}

func TestRegisteringRecordsAndMovesTheHome(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	a, b := newPeer(t, e, "a", false), newPeer(t, e, "b", false)
	s, _, err := a.reg.Register(ctx, sentinel.RegisterSession{ID: "h"})
	require.NoError(t, err)
	require.Equal(t, "a", s.HomeNode)
	s, _, err = b.reg.Register(ctx, sentinel.RegisterSession{ID: "h"})
	require.NoError(t, err)
	require.Equal(t, "b", s.HomeNode, "registering through another node moves the home")
	require.NoError(t, a.reg.Report(ctx, "h", sentinel.SessionReport{Kind: sentinel.FollowTurnEnd}))
	got, err := a.reg.Get(ctx, "h")
	require.NoError(t, err)
	require.Equal(t, "b", got.HomeNode, "a report is not a registration")
	_, err = a.reg.ContinueTo(ctx, "h", "h2")
	require.NoError(t, err)
	got, err = a.reg.Get(ctx, "h2")
	require.NoError(t, err)
	require.Equal(t, "b", got.HomeNode, "a successor inherits the home")
}

// A notify command hook is handed to the home node and runs there; a URL
// hook or a session living here runs here.
func TestNotifyCommandHookRunsOnTheHomeNode(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	a, b := newPeer(t, e, "a", true), newPeer(t, e, "b", true)
	hook, ran := nodeMarker(t, "notify")
	_, _, err := a.reg.Register(ctx, sentinel.RegisterSession{ID: "on-a", Hooks: &sentinel.SessionHooks{Notify: hook}})
	require.NoError(t, err)
	_, err = b.inboxes.Send(ctx, "on-a", sentinel.SendMessage{Text: "wake up"}, sessions.Sender{})
	require.NoError(t, err)
	bustest.Eventually(t, 10*time.Second, func() bool { return ran() != "" }, "the hook to run")
	require.Equal(t, "a\n", ran())

	local, ranLocal := nodeMarker(t, "local")
	_, _, err = b.reg.Register(ctx, sentinel.RegisterSession{ID: "on-b", Hooks: &sentinel.SessionHooks{Notify: local}})
	require.NoError(t, err)
	_, err = b.inboxes.Send(ctx, "on-b", sentinel.SendMessage{Text: "wake up"}, sessions.Sender{})
	require.NoError(t, err)
	bustest.Eventually(t, 10*time.Second, func() bool { return ranLocal() != "" }, "the hook to run")
	require.Equal(t, "b\n", ranLocal())
}

// A resume command hook runs on the home node, which answers the live
// id; with the home node down, resolving fails (the delivery is retried)
// instead of running the hook elsewhere or parking.
func TestResumeCommandHookRunsOnTheHomeNode(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	a, b := newPeer(t, e, "a", true), newPeer(t, e, "b", true)
	hook, ran := nodeMarker(t, "resume")
	_, _, err := b.reg.Register(ctx, sentinel.RegisterSession{ID: "r", Hooks: &sentinel.SessionHooks{Resume: hook}})
	require.NoError(t, err)
	require.NoError(t, b.reg.Report(ctx, "r", sentinel.SessionReport{Kind: sentinel.FollowCrashed}))

	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	res, err := a.resolver.Resolve(rctx, "r", true)
	require.NoError(t, err)
	require.Equal(t, sessions.Resolution{Action: sessions.Deliver, To: "r"}, res)
	require.Equal(t, "b\n", ran(), "ran on the home node")
	s, err := a.reg.Get(ctx, "r")
	require.NoError(t, err)
	require.Equal(t, sentinel.SessionRunning, s.Status, "the home node recorded the resume")

	c := newPeer(t, e, "c", false) // registered through c, which serves nothing: it is down
	_, _, err = c.reg.Register(ctx, sentinel.RegisterSession{ID: "r", Hooks: &sentinel.SessionHooks{Resume: hook}})
	require.NoError(t, err)
	require.NoError(t, c.reg.Report(ctx, "r", sentinel.SessionReport{Kind: sentinel.FollowCrashed}))
	_, err = a.resolver.Resolve(rctx, "r", true)
	require.ErrorIs(t, err, sessions.ErrHomeUnreachable)
	require.Contains(t, err.Error(), "its home node c, which is not up")
	require.Equal(t, "b\n", ran(), "not run anywhere else")
}
