package app

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/agentproto/sentinel/bus"
	"github.com/agentproto/sentinel/bus/embedded"
	"github.com/agentproto/sentinel/runtime/deliver"
	"github.com/agentproto/sentinel/runtime/poll"
	"github.com/agentproto/sentinel/runtime/sentinels"
)

// DefaultListen is the default API listen address.
const DefaultListen = "127.0.0.1:7717"

// Config is the whole configuration of a node. cmd/cli fills it from flags,
// AGENTPROTO_* environment variables and <home>/config.yaml (in that order
// of precedence) and calls Validate.
type Config struct {
	// Home is the node's folder (AGENTPROTO_HOME, else ~/.agentproto).
	Home string `mapstructure:"home"`
	// Listen is the API address, host:port; port 0 picks a free port.
	Listen string `mapstructure:"listen"`
	// AllowRemote must be set to listen on a non-loopback address.
	AllowRemote bool `mapstructure:"allow_remote"`
	// PublicURL is the daemon's public origin (AGENTPROTO_PUBLIC_URL or
	// AGENTPROTO_PUBLIC_HTTP_ORIGIN), used by push providers.
	PublicURL string `mapstructure:"public_url"`
	// PublicURLAllowHTTP lets the webhook provider use a plain-http public
	// URL that is not loopback (GitHub then delivers in clear).
	PublicURLAllowHTTP bool `mapstructure:"public_url_allow_http"`
	// LogLevel is debug, info, warn or error.
	LogLevel string `mapstructure:"log_level"`
	// LogFormat is text or json.
	LogFormat string `mapstructure:"log_format"`
	// MaxBodyBytes caps API request bodies.
	MaxBodyBytes int64 `mapstructure:"max_body_bytes"`
	// MaxInboundBytes caps push-ingress bodies (GitHub sends up to 25 MB).
	MaxInboundBytes int64 `mapstructure:"max_inbound_bytes"`
	// ShutdownTimeout bounds Stop.
	ShutdownTimeout time.Duration `mapstructure:"shutdown_timeout"`
	// ReconcileInterval is how often push providers are asked to recover
	// failed deliveries (webhook: GitHub redelivery).
	ReconcileInterval time.Duration `mapstructure:"reconcile_interval"`
	// SelectionOrder is the provider auto-selection order.
	SelectionOrder []string `mapstructure:"selection_order"`

	// Reload, when set, re-reads the configuration (cmd/cli sets it to read
	// flags, environment and config.yaml again). Settings documented as
	// "read fresh" (sentinel.auto_watch_prs) go through it.
	Reload func() (Config, error) `mapstructure:"-"`

	NATS     embedded.Config       `mapstructure:"nats"`
	Bus      bus.Config            `mapstructure:"bus"`
	Poll     poll.Config           `mapstructure:"poll"`
	Delivery deliver.WorkersConfig `mapstructure:"delivery"`
	Sentinel SentinelConfig        `mapstructure:"sentinel"`
	Testing  TestingConfig         `mapstructure:"testing"`
}

// SentinelConfig holds sentinel behaviour switches.
type SentinelConfig struct {
	// AutoWatchPRs creates a sentinel for every PR a session records.
	AutoWatchPRs bool `mapstructure:"auto_watch_prs"`
}

// TestingConfig holds test-only settings; never set them in production.
type TestingConfig struct {
	// FakeProvider registers the scriptable fake provider.
	FakeProvider bool `mapstructure:"fake_provider"`
	// FakeFeed is the JSON-lines feed file of the fake provider.
	FakeFeed string `mapstructure:"fake_feed"`
}

// DefaultConfig returns the defaults of a single embedded node.
func DefaultConfig() Config {
	home := os.Getenv("AGENTPROTO_HOME")
	if home == "" {
		if h, err := os.UserHomeDir(); err == nil {
			home = filepath.Join(h, ".agentproto")
		}
	}
	return Config{
		Home:              home,
		Listen:            DefaultListen,
		LogLevel:          "info",
		LogFormat:         "text",
		MaxBodyBytes:      1 << 20,
		MaxInboundBytes:   25 << 20,
		ShutdownTimeout:   20 * time.Second,
		ReconcileInterval: 5 * time.Minute,
		SelectionOrder:    append([]string(nil), sentinels.DefaultSelectionOrder...),
		NATS:              embedded.DefaultConfig(),
		Bus:               bus.DefaultConfig(),
		Poll:              poll.DefaultConfig(),
		Delivery:          deliver.DefaultWorkersConfig(),
		Sentinel:          SentinelConfig{AutoWatchPRs: true},
	}
}

// Validate checks the config and normalizes the public URL.
func (c *Config) Validate() error {
	if c.Home == "" {
		return errors.New("home is not set: set AGENTPROTO_HOME or --home")
	}
	host, port, err := net.SplitHostPort(c.Listen)
	if err != nil {
		return fmt.Errorf("listen %q must be host:port: %w", c.Listen, err)
	}
	if port == "" {
		return fmt.Errorf("listen %q has no port", c.Listen)
	}
	if !c.AllowRemote && !isLoopback(host) {
		return fmt.Errorf("listen %q is not a loopback address: pass --allow-remote to listen beyond this machine", c.Listen)
	}
	origin, err := sentinels.NormalizeOrigin(c.PublicURL)
	if err != nil {
		return fmt.Errorf("public URL: %w", err)
	}
	c.PublicURL = origin
	if err := c.Bus.Validate(); err != nil {
		return err
	}
	if err := c.Poll.Validate(); err != nil {
		return err
	}
	if c.ShutdownTimeout <= 0 {
		c.ShutdownTimeout = 20 * time.Second
	}
	return nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
