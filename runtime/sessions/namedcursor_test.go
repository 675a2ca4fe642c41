package sessions_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/runtime/runtimetest"
	"github.com/agentproto/sentinel/runtime/sessions"
)

// Issue 25: a named cursor (the Claude Code channel's) is kept beside the
// read cursor and moves without it; a bad name is invalid_input; retention
// prunes it with the read cursors.
func TestNamedCursorsMoveIndependently(t *testing.T) {
	e := newEnvWith(t, runtimetest.Options{NoWorkers: true})
	ctx := context.Background()
	e.register(t, sentinel.RegisterSession{ID: "nc"})
	for _, text := range []string{"one", "two"} {
		_, err := e.Inboxes.Send(ctx, "nc", sentinel.SendMessage{Text: text}, sessions.Sender{})
		require.NoError(t, err)
	}
	msgs, _, err := e.Inboxes.Read(ctx, sentinel.InboxQuery{SessionID: "nc", Limit: 1, Ack: true, Cursor: "channel"})
	require.NoError(t, err)
	require.Len(t, msgs, 1)
	require.Equal(t, "one", msgs[0].Text)

	msgs, _, err = e.Inboxes.Read(ctx, sentinel.InboxQuery{SessionID: "nc", Cursor: "channel"})
	require.NoError(t, err)
	require.Len(t, msgs, 1, "the channel reads on after its own cursor")
	require.Equal(t, "two", msgs[0].Text)
	msgs, _, err = e.Inboxes.Read(ctx, sentinel.InboxQuery{SessionID: "nc"})
	require.NoError(t, err)
	require.Len(t, msgs, 2, "the read cursor did not move")
	c, err := e.Inboxes.Cursor(ctx, "nc")
	require.NoError(t, err)
	require.Zero(t, c)

	_, _, err = e.Inboxes.Read(ctx, sentinel.InboxQuery{SessionID: "nc", Cursor: "Bad.Name"})
	var de *sentinel.Error
	require.ErrorAs(t, err, &de)
	require.Equal(t, sentinel.CodeInvalidInput, de.Code)

	n, err := e.Inboxes.PruneCursors(ctx, e.Clock.Now().AddDate(1, 0, 0), 0)
	require.NoError(t, err)
	require.Equal(t, 1, n, "the named cursor is pruned like a read cursor")
}
