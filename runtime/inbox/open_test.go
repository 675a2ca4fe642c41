package inbox_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/bus/bustest"
	"github.com/agentproto/sentinel/runtime/inbox"
)

// openInbox opens the inbox on env's bus (provisioning its stream).
func openInbox(t testing.TB, env *bustest.Env) *inbox.Inbox {
	t.Helper()
	in, err := inbox.Open(context.Background(), env.Bus, env.Bus.Cfg)
	require.NoError(t, err)
	return in
}
