package github_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers/github"
)

// TestSelfFallsBackToTheConfiguredLogin: where GET /user is refused (an
// App installation token), the configured github.self_login names the
// identity, and GET /user is asked again only after a while.
func TestSelfFallsBackToTheConfiguredLogin(t *testing.T) {
	now := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	calls := 0
	refuse := true
	s := &github.Self{Fallback: "my-app[bot]", Now: func() time.Time { return now }, Fetch: func(context.Context) (string, error) {
		calls++
		if refuse {
			return "", errors.New("403 Resource not accessible by integration")
		}
		return "octocat", nil
	}}
	ctx := context.Background()
	require.Equal(t, "my-app[bot]", s.Login(ctx))
	require.Equal(t, "my-app[bot]", s.Login(ctx))
	require.Equal(t, 1, calls, "a refusal is not asked again at once")

	evs := []sentinel.Event{
		sentinel.NewEvent("e1", "//t", "github.issue_comment.created", "github:o/r#1", nil, now, "s", false, map[string]any{"actor": "my-app[bot]"}),
		sentinel.NewEvent("e2", "//t", "github.issue_comment.created", "github:o/r#1", nil, now, "s", false, map[string]any{"actor": "bob"}),
		sentinel.NewEvent("e3", "//t", "github.pull_request.synchronize", "github:o/r#1", nil, now, "s", false, map[string]any{}),
	}
	s.Mark(ctx, evs)
	require.Equal(t, []bool{true, false, false}, []bool{evs[0].SelfCaused, evs[1].SelfCaused, evs[2].SelfCaused})

	now = now.Add(6 * time.Minute)
	refuse = false
	require.Equal(t, "octocat", s.Login(ctx))
	require.Equal(t, 2, calls)
	require.Equal(t, "octocat", s.Login(ctx))
	require.Equal(t, 2, calls, "a success is cached")

	var none *github.Self
	none.Mark(ctx, evs)
	require.Empty(t, none.Login(ctx))
}

// TestGhostIsNeverSelf: the ghost account (a deleted user) is never the
// node's own identity, even when the configured login says "ghost".
func TestGhostIsNeverSelf(t *testing.T) {
	now := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	s := &github.Self{Fallback: "ghost", Now: func() time.Time { return now }}
	evs := []sentinel.Event{sentinel.NewEvent("e1", "//t", "github.pull_request_review.submitted", "github:o/r#1", nil, now, "s", false, map[string]any{"actor": "ghost"})}
	s.Mark(context.Background(), evs)
	require.False(t, evs[0].SelfCaused)
	require.True(t, github.IsGhost("Ghost"))
	require.True(t, github.IsBotAccount("copilot-pull-request-reviewer[bot]", "Bot"))
	require.True(t, github.IsBotAccount("Copilot", "Bot"))
	require.False(t, github.IsBotAccount("ghost", "User"))
	require.Equal(t, "NONE", github.TrustedAssociation("ghost", "OWNER"))
	require.Equal(t, "OWNER", github.TrustedAssociation("alice", "OWNER"))
}
