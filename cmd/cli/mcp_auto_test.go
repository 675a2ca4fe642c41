package cli

import (
	"context"
	"testing"

	"github.com/agentproto/sentinel"
	"github.com/stretchr/testify/require"
)

type fixedSessions []sentinel.Session

func (f fixedSessions) List(context.Context) ([]sentinel.Session, error) { return f, nil }

func TestSessionForCwdPicksTheLatestLiveSessionOfTheFolder(t *testing.T) {
	s := fixedSessions{
		{ID: "old", Cwd: "/work/proj", Status: "running", LastSeenTs: 10},
		{ID: "new", Cwd: "/work/proj/", Status: "idle", LastSeenTs: 20},
		{ID: "ended", Cwd: "/work/proj", Status: "ended", LastSeenTs: 30},
		{ID: "other", Cwd: "/work/other", Status: "running", LastSeenTs: 40},
	}
	require.Equal(t, "new", sessionForCwd(context.Background(), s, "/work/proj"))
	require.Equal(t, "", sessionForCwd(context.Background(), s, "/elsewhere"))
}
