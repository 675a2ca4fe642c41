package sessions_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/bus"
	"github.com/agentproto/sentinel/runtime/sessions"
)

// storesOf provisions the sessions' assets on b, as the composition root
// does, and returns them.
func storesOf(t testing.TB, b *bus.Bus) *sessions.Stores {
	t.Helper()
	st, err := sessions.OpenStores(context.Background(), b, b.Cfg)
	require.NoError(t, err)
	return st
}
