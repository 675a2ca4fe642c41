package cli

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentproto/sentinel/ingress/api"
	"github.com/agentproto/sentinel/runtime/app"
)

func newServeCmd(io IO) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run a sentinel node (embedded NATS JetStream, runtime, HTTP API)",
		Long: `Run a sentinel node on its embedded defaults: an in-process nats-server with
JetStream storing under <home>/jetstream (fsync on every write), the poll loop
and delivery workers, and one HTTP listener (REST API, push ingress, MCP,
health, metrics) on 127.0.0.1:7717. Writes <home>/daemon.json and
<home>/daemon-token (0600) for clients. SIGINT/SIGTERM stop it cleanly.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			flagKeys := map[string]string{
				"listen":       "listen",
				"allow-remote": "allow_remote",
				"public-url":   "public_url",
				"log-level":    "log_level",
				"log-format":   "log_format",
			}
			cfg, err := LoadConfig(cmd, flagKeys)
			if err != nil {
				return &ExitError{Code: api.ExitUsage, Err: err}
			}
			cfg.Reload = func() (app.Config, error) { return LoadConfig(cmd, flagKeys) }
			log := newLogger(io, cfg.LogLevel, cfg.LogFormat)
			a, err := app.New(cfg, log)
			if err != nil {
				return &ExitError{Code: api.ExitError, Err: err}
			}
			fmt.Fprintf(io.ErrOut, "sentinel: listening on %s (home %s)\n", a.URL(), cfg.Home)
			if err := a.Run(cmd.Context()); err != nil {
				return &ExitError{Code: api.ExitError, Err: err}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.String("listen", app.DefaultListen, "API listen address host:port (port 0 picks a free port; daemon.json tells which)")
	f.Bool("allow-remote", false, "allow listening on a non-loopback address")
	f.String("public-url", "", "public origin of this node for push providers (AGENTPROTO_PUBLIC_URL)")
	f.String("log-level", "info", "log level: debug, info, warn, error")
	f.String("log-format", "text", "log format: text or json")
	return cmd
}

func newLogger(io IO, level, format string) *slog.Logger {
	var lv slog.Level
	switch strings.ToLower(level) {
	case "debug":
		lv = slog.LevelDebug
	case "warn":
		lv = slog.LevelWarn
	case "error":
		lv = slog.LevelError
	default:
		lv = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: lv}
	if strings.ToLower(format) == "json" {
		return slog.New(slog.NewJSONHandler(io.ErrOut, opts))
	}
	return slog.New(slog.NewTextHandler(io.ErrOut, opts))
}
