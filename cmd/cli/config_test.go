package cli

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/runtime/app"
)

func TestConfigPrecedenceFlagsEnvFileDefaults(t *testing.T) {
	home := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(home, "config.yaml"), []byte(`
listen: 127.0.0.1:9001
log_level: debug
poll:
  active_interval: 5s
  idle_interval: 30s
bus:
  partitions: 8
sentinel:
  auto_watch_prs: false
`), 0o600))
	t.Setenv("AGENTPROTO_HOME", home)
	t.Setenv("AGENTPROTO_LISTEN", "127.0.0.1:9002")
	t.Setenv("AGENTPROTO_POLL_IDLE_INTERVAL", "45s")
	t.Setenv("AGENTPROTO_PUBLIC_HTTP_ORIGIN", "https://alias.example")
	t.Setenv("AGENTPROTO_ALLOWED_HOSTS", "a.example,b.example:8443")
	t.Setenv("AGENTPROTO_MAX_STREAMS_PER_SESSION", "3")

	run := func(args ...string) (cfg app.Config) {
		cmd := newServeCmd(IO{})
		root := &cobra.Command{Use: "sentinel"}
		root.PersistentFlags().String("home", "", "")
		root.AddCommand(cmd)
		require.NoError(t, cmd.ParseFlags(args))
		c, err := LoadConfig(cmd, map[string]string{"listen": "listen", "log-level": "log_level", "public-url": "public_url"})
		require.NoError(t, err)
		return c
	}
	cfg := run()
	require.Equal(t, home, cfg.Home)
	require.Equal(t, "127.0.0.1:9002", cfg.Listen, "env beats the file")
	require.Equal(t, "debug", cfg.LogLevel, "the file beats the default")
	require.Equal(t, 5*time.Second, cfg.Poll.ActiveInterval)
	require.Equal(t, 45*time.Second, cfg.Poll.IdleInterval, "env beats the file for nested keys")
	require.Equal(t, 8, cfg.Bus.Partitions)
	require.False(t, cfg.Sentinel.AutoWatchPRs)
	require.Equal(t, "https://alias.example", cfg.PublicURL, "AGENTPROTO_PUBLIC_HTTP_ORIGIN is an alias of the public URL")
	require.True(t, cfg.NATS.SyncAlways, "fsync on every write by default")
	require.Equal(t, []string{"a.example", "b.example:8443"}, cfg.AllowedHosts, "allowed_hosts takes a comma list from the environment")
	require.Equal(t, 3, cfg.MaxStreamsPerSession)
	require.Equal(t, 256, cfg.MaxStreams)

	cfg = run("--listen", "127.0.0.1:9003", "--log-level", "warn")
	require.Equal(t, "127.0.0.1:9003", cfg.Listen, "a flag beats env")
	require.Equal(t, "warn", cfg.LogLevel)

	t.Setenv("AGENTPROTO_PUBLIC_URL", "https://main.example")
	require.Equal(t, "https://main.example", run().PublicURL, "AGENTPROTO_PUBLIC_URL wins over the alias")

	require.False(t, cfg.PublicURLAllowHTTP, "plain-http public URLs are refused by default")
	t.Setenv("AGENTPROTO_PUBLIC_URL_ALLOW_HTTP", "true")
	require.True(t, run().PublicURLAllowHTTP)
}

func TestExampleConfigLoadsAndMatchesTheDefaults(t *testing.T) {
	home := t.TempDir()
	raw, err := os.ReadFile(filepath.Join("..", "..", "deploy", "config.example.yaml"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(home, "config.yaml"), raw, 0o600))
	t.Setenv("AGENTPROTO_HOME", home)
	t.Setenv("AGENTPROTO_TOKEN", "") // a client's token in the caller's environment is not a default
	cmd := newServeCmd(IO{})
	root := &cobra.Command{Use: "sentinel"}
	root.PersistentFlags().String("home", "", "")
	root.AddCommand(cmd)
	cfg, err := LoadConfig(cmd, nil)
	require.NoError(t, err)
	def := app.DefaultConfig()
	def.Home = home
	require.Equal(t, def, cfg, "deploy/config.example.yaml documents the defaults")
	require.Contains(t, string(raw), "# token: \"\"")
}

// AGENTPROTO_TOKEN, the variable the CLI sends as its bearer, is also the
// node's token: both meanings are the same secret.
func TestTokenComesFromTheEnvironment(t *testing.T) {
	t.Setenv("AGENTPROTO_HOME", t.TempDir())
	t.Setenv("AGENTPROTO_TOKEN", "0123456789abcdef0123456789abcdef")
	cmd := newServeCmd(IO{})
	root := &cobra.Command{Use: "sentinel"}
	root.PersistentFlags().String("home", "", "")
	root.AddCommand(cmd)
	cfg, err := LoadConfig(cmd, nil)
	require.NoError(t, err)
	require.Equal(t, "0123456789abcdef0123456789abcdef", cfg.Token)
}
