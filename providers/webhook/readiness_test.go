package webhook

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/providers/github"
	"github.com/agentproto/sentinel/providers/github/githubtest"
)

func TestReadiness(t *testing.T) {
	tests := []struct {
		name   string
		opts   githubtest.Options
		setup  func(h *harness) Runner
		ready  bool
		reason []string
	}{
		{name: "default scopes", ready: true},
		{name: "write:repo_hook", opts: githubtest.Options{Scopes: "write:repo_hook"}, ready: true},
		{name: "repo", opts: githubtest.Options{Scopes: "read:org, repo"}, ready: true},
		{name: "no scopes header (fine-grained)", opts: githubtest.Options{NoScopes: true}, ready: true},
		{name: "missing scope", opts: githubtest.Options{Scopes: "read:org, gist"},
			reason: []string{"read:org, gist", "admin:repo_hook", "gh auth refresh -s admin:repo_hook"}},
		{name: "no public URL", setup: func(h *harness) Runner { h.setURL(""); return h.runner },
			reason: []string{"AGENTPROTO_PUBLIC_URL", "named tunnel"}},
		{name: "plain http public URL", setup: func(h *harness) Runner { h.setURL("http://sentinel.example.test"); return h.runner },
			reason: []string{"http://sentinel.example.test", "plain http", "public_url_allow_http"}},
		{name: "plain http public URL, allowed", setup: func(h *harness) Runner {
			h.setURL("http://sentinel.example.test")
			h.allowHTTP = true
			return h.runner
		}, ready: true},
		{name: "plain http to loopback", setup: func(h *harness) Runner { h.setURL("http://127.0.0.1:7717"); return h.runner }, ready: true},
		{name: "not authenticated", setup: func(h *harness) Runner {
			return github.NewRunner(github.Config{Env: h.gh.Env("")})
		}, reason: []string{"not authenticated", "gh auth login"}},
		{name: "bad token", setup: func(h *harness) Runner {
			return github.NewRunner(github.Config{Env: h.gh.Env("ghp_revokedrevokedrevokedrevoked0000")})
		}, reason: []string{"not authenticated", "gh auth login"}},
		{name: "gh not installed", setup: func(h *harness) Runner {
			return github.NewRunner(github.Config{Path: "/nonexistent/gh", Env: h.gh.Env(h.gh.Token())})
		}, reason: []string{"not installed", "https://cli.github.com"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, tt.opts)
			r := Runner(h.runner)
			if tt.setup != nil {
				r = tt.setup(h)
			}
			got := h.providerWith("node-a", r).Readiness(context.Background())
			require.Equal(t, tt.ready, got.Ready, got.Reason)
			for _, part := range tt.reason {
				require.Contains(t, got.Reason, part)
			}
			require.NotContains(t, got.Reason, h.gh.Token())
		})
	}
}
