package follow_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/bus"
	"github.com/agentproto/sentinel/runtime/follow"
	"github.com/agentproto/sentinel/runtime/inbox"
	"github.com/agentproto/sentinel/runtime/park"
	"github.com/agentproto/sentinel/runtime/sessions"
)

// The assets of the packages a follow engine runs with, provisioned on b
// from their owners' configs as the composition root does.

func storesOf(t testing.TB, b *bus.Bus) *sessions.Stores {
	t.Helper()
	st, err := sessions.OpenStores(context.Background(), b, b.Cfg)
	require.NoError(t, err)
	return st
}

func lifecycleOf(t testing.TB, b *bus.Bus) jetstream.Stream {
	t.Helper()
	return storesOf(t, b).Lifecycle
}

func registryOn(t testing.TB, b *bus.Bus, now func() time.Time, log *slog.Logger) *sessions.Registry {
	t.Helper()
	return sessions.NewRegistry(b, storesOf(t, b).Sessions, sessions.WithRegistryClock(now), sessions.WithRegistryLogger(log))
}

func inboxesOn(t testing.TB, b *bus.Bus, ib *inbox.Inbox, reg *sessions.Registry, n *sessions.Notifier) *sessions.Inboxes {
	t.Helper()
	return sessions.NewInboxes(storesOf(t, b).Cursors, ib, reg, n)
}

func inboxOf(t testing.TB, b *bus.Bus) *inbox.Inbox {
	t.Helper()
	ib, err := inbox.Open(context.Background(), b, b.Cfg)
	require.NoError(t, err)
	return ib
}

func parkOf(t testing.TB, b *bus.Bus, now func() time.Time) *park.Store {
	t.Helper()
	pk, err := park.Open(context.Background(), b, b.Cfg, park.WithClock(now))
	require.NoError(t, err)
	return pk
}

func followsOf(t testing.TB, b *bus.Bus) jetstream.KeyValue {
	t.Helper()
	kv, err := b.EnsureKeyValue(context.Background(), follow.BucketConfig())
	require.NoError(t, err)
	return kv
}
