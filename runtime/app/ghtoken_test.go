package app_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/runtime/app"
)

// In a container there is no gh: with GH_TOKEN set, local-gh is ready and
// GET /adapters names the source (info.credentialSource) for both GitHub
// providers; the token is never logged.
func TestAdaptersNameTheGitHubCredentialSource(t *testing.T) {
	const token = "ghp_containertoken0123456789abcdefXYZ"
	t.Setenv("PATH", t.TempDir()) // gh is nowhere
	t.Setenv("GH_TOKEN", token)
	t.Setenv("GITHUB_TOKEN", "")
	t.Setenv("GH_HOST", "")
	var logs syncBuffer
	cfg := app.DefaultConfig()
	cfg.Home = t.TempDir()
	cfg.Listen = "127.0.0.1:0"
	cfg.NATS.SyncAlways = false
	cfg.LogLevel = "debug"
	node, err := app.New(cfg, slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	require.NoError(t, err)
	require.NoError(t, node.Start(context.Background()))
	t.Cleanup(func() { _ = node.Stop(context.Background()) })

	req, err := http.NewRequest(http.MethodGet, node.URL()+"/adapters", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+node.Token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var out struct {
		Adapters []struct {
			Slug   string         `json:"slug"`
			Status string         `json:"status"`
			Info   map[string]any `json:"info"`
		} `json:"adapters"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	seen := map[string]bool{}
	for _, a := range out.Adapters {
		switch a.Slug {
		case "local-gh":
			require.Equal(t, "ready", a.Status, "GH_TOKEN makes local-gh ready without gh: %v", a.Info)
			require.Equal(t, "GH_TOKEN", a.Info["credentialSource"])
			seen[a.Slug] = true
		case "webhook":
			require.Equal(t, "GH_TOKEN", a.Info["credentialSource"])
			seen[a.Slug] = true
		}
	}
	require.Len(t, seen, 2)
	require.Contains(t, logs.String(), "source=GH_TOKEN")
	require.NotContains(t, logs.String(), token, "the GitHub token is never logged")
}
