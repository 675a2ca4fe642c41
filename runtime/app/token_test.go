package app_test

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/runtime/app"
)

func bearerStatus(t *testing.T, a *app.App, token string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, a.URL()+"/sentinels", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode
}

// Every node given the same token (AGENTPROTO_TOKEN, config key token)
// accepts the same bearer, writes it to <home>/daemon-token for local
// clients (replacing a generated one) and never logs it.
func TestNodesShareTheConfiguredToken(t *testing.T) {
	t.Parallel()
	const token = "0123456789abcdef0123456789abcdef-shared"
	var logs syncBuffer
	var nodes []*app.App
	for i := range 2 {
		cfg := app.DefaultConfig()
		cfg.Home = t.TempDir()
		cfg.Listen = "127.0.0.1:0"
		cfg.NATS.SyncAlways = false
		cfg.LogLevel = "debug"
		cfg.Token = token
		if i == 1 {
			require.NoError(t, os.WriteFile(filepath.Join(cfg.Home, app.TokenFile), []byte(strings.Repeat("f", 64)+"\n"), 0o644))
		}
		a, err := app.New(cfg, slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
		require.NoError(t, err)
		require.NoError(t, a.Start(context.Background()))
		t.Cleanup(func() { _ = a.Stop(context.Background()) })
		nodes = append(nodes, a)
	}
	for i, a := range nodes {
		require.Equal(t, token, a.Token)
		require.Equal(t, http.StatusOK, bearerStatus(t, a, token), "node %d", i)
		require.Equal(t, http.StatusUnauthorized, bearerStatus(t, a, strings.Repeat("x", 40)), "node %d", i)
		path := filepath.Join(a.Cfg.Home, app.TokenFile)
		raw, err := os.ReadFile(path)
		require.NoError(t, err)
		require.Equal(t, token, strings.TrimSpace(string(raw)), "node %d: daemon-token holds the configured token", i)
		fi, err := os.Stat(path)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	}
	require.NotEmpty(t, logs.String())
	require.NotContains(t, logs.String(), token)
}

// A configured token that is too short, or not a header-safe string, is
// refused at start with an error naming the key (never the value).
func TestConfiguredTokenIsValidated(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, token, want string }{
		{name: "short", token: "short-secret-value", want: "fewer than 32"},
		{name: "space", token: "0123456789abcdef 0123456789abcdef", want: "printable ASCII without spaces"},
		{name: "newline", token: "0123456789abcdef0123456789abcdef\n", want: "printable ASCII without spaces"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := app.DefaultConfig()
			cfg.Home = t.TempDir()
			cfg.Listen = "127.0.0.1:0"
			cfg.Token = tc.token
			_, err := app.New(cfg, slog.New(slog.DiscardHandler))
			require.ErrorContains(t, err, "token (AGENTPROTO_TOKEN)")
			require.ErrorContains(t, err, tc.want)
			require.NotContains(t, err.Error(), strings.TrimSpace(tc.token))
			_, statErr := os.Stat(filepath.Join(cfg.Home, app.TokenFile))
			require.ErrorIs(t, statErr, os.ErrNotExist, "nothing written")
		})
	}
}
