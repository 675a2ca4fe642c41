package app

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/agentproto/sentinel/bus"
	"github.com/agentproto/sentinel/bus/embedded"
	"github.com/agentproto/sentinel/ingress"
	"github.com/agentproto/sentinel/ingress/httpapi"
	"github.com/agentproto/sentinel/ingress/inbound"
	"github.com/agentproto/sentinel/providers/adapter"
	"github.com/agentproto/sentinel/providers/github"
	"github.com/agentproto/sentinel/runtime/deliver"
	"github.com/agentproto/sentinel/runtime/journal"
	"github.com/agentproto/sentinel/runtime/poll"
	"github.com/agentproto/sentinel/runtime/sentinels"
	"github.com/agentproto/sentinel/runtime/subscriptions"
)

// DefaultListen is the default API listen address.
const DefaultListen = "127.0.0.1:7717"

// DefaultClusterWait is cluster.wait's default.
const DefaultClusterWait = 2 * time.Minute

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
	// TLSCert and TLSKey (PEM files), both set, make the API listener
	// serve https (reloaded when the files change). Required for a
	// listener beyond loopback unless AllowInsecureRemote.
	TLSCert string `mapstructure:"tls_cert"`
	TLSKey  string `mapstructure:"tls_key"`
	// AllowInsecureRemote lets a listener beyond loopback (the API, the
	// route listener, the NATS client listener) run without TLS: the
	// bearer token, the route credentials and every replicated secret
	// then cross the network in clear. Logged as a warning at start.
	AllowInsecureRemote bool `mapstructure:"allow_insecure_remote"`
	// PublicURL is the daemon's public origin (AGENTPROTO_PUBLIC_URL or
	// AGENTPROTO_PUBLIC_HTTP_ORIGIN), used by push providers.
	PublicURL string `mapstructure:"public_url"`
	// Token is the API bearer token of the service (AGENTPROTO_TOKEN, the
	// same variable the CLI sends): give every node of one service the
	// same. Set, it must be at least MinTokenLen printable characters and
	// is written to <home>/daemon-token (0600) for local clients; empty,
	// the node keeps the token in <home>/daemon-token, generating one when
	// absent. Read at start; never logged.
	Token string `mapstructure:"token"`
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
	// MaxInboundBytesInFlight caps the push-ingress body bytes held at once
	// by all requests together (503 inbound_busy past it); at least
	// MaxInboundBytes.
	MaxInboundBytesInFlight int64 `mapstructure:"max_inbound_bytes_in_flight"`
	// BodyReadTimeout bounds how long any request body may take to arrive
	// (408 body_timeout); requests without a body (streams, long-polls)
	// are never bounded.
	BodyReadTimeout time.Duration `mapstructure:"body_read_timeout"`
	// AllowedHosts are the Host names the node answers to besides loopback
	// names and the public URL's host (a YAML list, or a comma list in
	// AGENTPROTO_ALLOWED_HOSTS); an entry with :port matches that port only.
	AllowedHosts []string `mapstructure:"allowed_hosts"`
	// MaxStreams caps the open inbox SSE streams and ?wait= long-polls of
	// the node (429 too_many_streams past it).
	MaxStreams int `mapstructure:"max_streams"`
	// MaxStreamsPerSession caps those of one session.
	MaxStreamsPerSession int `mapstructure:"max_streams_per_session"`
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

	Node     NodeConfig            `mapstructure:"node"`
	Cluster  ClusterConfig         `mapstructure:"cluster"`
	NATS     NATSConfig            `mapstructure:"nats"`
	Bus      bus.Config            `mapstructure:"bus"`
	Poll     poll.Config           `mapstructure:"poll"`
	Delivery deliver.WorkersConfig `mapstructure:"delivery"`
	Sentinel SentinelConfig        `mapstructure:"sentinel"`
	// MCPEvents tunes MCP Events (SEP-3415) subscriptions.
	MCPEvents subscriptions.Config `mapstructure:"mcp_events"`
	Journal   journal.Config       `mapstructure:"journal"`
	GitHub    GitHubConfig         `mapstructure:"github"`
	// Adapters are the third-party providers: where they are discovered
	// (<home>/adapters, adapters.paths, PATH) and the bounds of their
	// processes (docs/adapters.md).
	Adapters adapter.Config `mapstructure:"adapters"`
	Testing  TestingConfig  `mapstructure:"testing"`
}

// GitHubConfig is how the GitHub providers reach GitHub. The token comes
// from GH_TOKEN, else GITHUB_TOKEN (every call then in-process, no gh
// needed: containers), else the host's gh.
type GitHubConfig struct {
	// APIURL is the REST root (default https://api.github.com); point it
	// at GitHub Enterprise (https://<host>/api/v3). Left at the default,
	// GH_HOST names an Enterprise host, as for gh.
	APIURL string `mapstructure:"api_url"`
	// SelfLogin is the GitHub login the providers act as when GET /user is
	// refused for their credential (an App installation token): the loop
	// shield marks the events it caused selfcaused. Empty: GET /user only.
	SelfLogin string `mapstructure:"self_login"`
	// App is the github-app provider's setup from the node's config, used
	// while none is stored through the API (docs/github-app.md).
	App GitHubAppConfig `mapstructure:"app"`
}

// GitHubAppConfig sets the GitHub App up from the node's config (a
// deployment's environment and secret files) instead of `sentinel setup`:
// AGENTPROTO_GITHUB_APP_APP_ID, AGENTPROTO_GITHUB_APP_PRIVATE_KEY_FILE (the
// PEM's path, a 0600 file) and AGENTPROTO_GITHUB_APP_WEBHOOK_SECRET_FILE (a
// 0600 file holding the secret; cmd/cli reads it). All three or none.
type GitHubAppConfig struct {
	AppID          string `mapstructure:"app_id"`
	PrivateKeyFile string `mapstructure:"private_key_file"`
	WebhookSecret  string `mapstructure:"webhook_secret"`
}

// validate checks the three fields go together and the id is a number;
// errors never quote the secret.
func (c GitHubAppConfig) validate() error {
	set := 0
	for _, v := range []string{c.AppID, c.PrivateKeyFile, c.WebhookSecret} {
		if strings.TrimSpace(v) != "" {
			set++
		}
	}
	switch {
	case set == 0:
		return nil
	case set < 3:
		return errors.New("github.app: app_id, private_key_file and webhook_secret go together (AGENTPROTO_GITHUB_APP_APP_ID, AGENTPROTO_GITHUB_APP_PRIVATE_KEY_FILE, AGENTPROTO_GITHUB_APP_WEBHOOK_SECRET_FILE): set all three, or none and use `sentinel setup github-app`")
	}
	if n, err := strconv.ParseInt(strings.TrimSpace(c.AppID), 10, 64); err != nil || n <= 0 {
		return fmt.Errorf("github.app.app_id %q is not an App id: give the number on the App's settings page (\"App ID\")", c.AppID)
	}
	return nil
}

// NodeConfig names this node.
type NodeConfig struct {
	// Name is the node's unique name (its nats-server's name). Empty:
	// "sentinel" alone; <host>-<cluster port> when clustered.
	Name string `mapstructure:"name"`
}

// ClusterConfig joins this node's embedded server with its peers'.
type ClusterConfig struct {
	// Name is the cluster name, the same on every node.
	Name string `mapstructure:"name"`
	// Listen is the route listener, host:port. Set: clustered.
	Listen string `mapstructure:"listen"`
	// Routes are the peers, nats://host:port (a node may list itself).
	Routes []string `mapstructure:"routes"`
	// Token is the route secret, the same on every node, at least
	// MinTokenLen printable characters: every route listener, loopback
	// included, authenticates routes with it. Empty, the node keeps it in
	// <home>/cluster-token (routetoken.go). Never logged or shown.
	Token string `mapstructure:"token"`
	// Advertise is the host:port peers dial for this node's routes, when
	// it differs from Listen (containers, NAT).
	Advertise string `mapstructure:"advertise"`
	// Wait is how long a starting node waits for a JetStream meta leader
	// before it warns (and again every Wait); it keeps waiting, serving
	// /healthz, as long as it runs. It also bounds provisioning once the
	// leader is found. Default 2m.
	Wait time.Duration `mapstructure:"wait"`
	// TLSCert and TLSKey (PEM files) are this node's route certificate,
	// TLSCA the CA that signs every node's: set, all three, every route is
	// TLS verified both ways. Required for a route listener beyond
	// loopback unless allow_insecure_remote.
	TLSCert string `mapstructure:"tls_cert"`
	TLSKey  string `mapstructure:"tls_key"`
	TLSCA   string `mapstructure:"tls_ca"`
}

// Clustered reports whether an embedded cluster is configured.
func (c ClusterConfig) Clustered() bool { return c.Listen != "" }

// NATSConfig is the embedded server's configuration, or, with URL set,
// how to reach an existing NATS deployment (external mode: nothing is
// embedded).
type NATSConfig struct {
	embedded.Config `mapstructure:",squash"`

	// MinFree is the free space (bytes) of the store's disk under which
	// the node refuses writes (storage_full) before JetStream meets a full
	// disk (default DefaultMinFree; embedded mode only).
	MinFree uint64 `mapstructure:"min_free"`
	// StorageCheck is how often the storage guard looks (default 2s).
	StorageCheck time.Duration `mapstructure:"storage_check"`

	// URL lists the external deployment's servers; set, it selects
	// external mode.
	URL []string `mapstructure:"url"`
	// Creds is a .creds file; NKey a file with an nkey seed; User and
	// Password, or ClientToken, the other credential kinds.
	Creds       string `mapstructure:"creds"`
	NKey        string `mapstructure:"nkey"`
	User        string `mapstructure:"user"`
	Password    string `mapstructure:"password"`
	ClientToken string `mapstructure:"client_token"`
	// TLSCA trusts a CA; TLSCert and TLSKey present a client certificate.
	TLSCA   string `mapstructure:"tls_ca"`
	TLSCert string `mapstructure:"tls_cert"`
	TLSKey  string `mapstructure:"tls_key"`
}

// External reports whether the node uses an existing NATS deployment.
func (c NATSConfig) External() bool { return len(c.URL) > 0 }

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
		NATS:              NATSConfig{Config: embedded.DefaultConfig(), MinFree: DefaultMinFree, StorageCheck: 2 * time.Second},
		Bus:               bus.DefaultConfig(),
		Poll:              poll.DefaultConfig(),
		Delivery:          deliver.DefaultWorkersConfig(),
		Sentinel:          SentinelConfig{AutoWatchPRs: true},
		MCPEvents:         subscriptions.DefaultConfig(),
		GitHub:            GitHubConfig{APIURL: github.DefaultAPIURL},
		Adapters:          adapter.DefaultConfig(),
		Journal:           journal.DefaultConfig(),
		Cluster:           ClusterConfig{Wait: DefaultClusterWait},

		MaxInboundBytesInFlight: inbound.DefaultMaxInFlight,
		BodyReadTimeout:         ingress.DefaultBodyReadTimeout,
		AllowedHosts:            []string{},
		MaxStreams:              httpapi.DefaultMaxStreams,
		MaxStreamsPerSession:    httpapi.DefaultMaxStreamsPerSession,
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
	if err := c.validateTopology(); err != nil {
		return err
	}
	if c.NATS.Listen != "" {
		nhost, _, err := net.SplitHostPort(c.NATS.Listen)
		if err != nil {
			return fmt.Errorf("nats.listen %q must be host:port: %w", c.NATS.Listen, err)
		}
		if !c.AllowRemote && !isLoopback(nhost) {
			return fmt.Errorf("nats.listen %q is not a loopback address: pass --allow-remote (allow_remote) to open the NATS port beyond this machine", c.NATS.Listen)
		}
	}
	if err := c.validateTransport(); err != nil {
		return err
	}
	if err := validateToken(c.Token); err != nil {
		return err
	}
	if err := c.MCPEvents.Validate(); err != nil {
		return err
	}
	origin, err := sentinels.NormalizeOrigin(c.PublicURL)
	if err != nil {
		return fmt.Errorf("public URL: %w", err)
	}
	c.PublicURL = origin
	if _, err := ingress.NewHostPolicy(c.AllowedHosts, c.PublicURL); err != nil {
		return err
	}
	if c.MaxInboundBytes > 0 && c.MaxInboundBytesInFlight > 0 && c.MaxInboundBytesInFlight < c.MaxInboundBytes {
		return fmt.Errorf("max_inbound_bytes_in_flight (%d) must be at least max_inbound_bytes (%d)", c.MaxInboundBytesInFlight, c.MaxInboundBytes)
	}
	if c.MaxStreams < 0 || c.MaxStreamsPerSession < 0 || c.BodyReadTimeout < 0 {
		return errors.New("max_streams, max_streams_per_session and body_read_timeout must not be negative (0 takes the default)")
	}
	if err := c.Bus.Validate(); err != nil {
		return err
	}
	if err := c.Poll.Validate(); err != nil {
		return err
	}
	if err := c.Journal.Validate(); err != nil {
		return err
	}
	if err := c.Adapters.Validate(); err != nil {
		return err
	}
	if err := c.GitHub.App.validate(); err != nil {
		return err
	}
	if c.ShutdownTimeout <= 0 {
		c.ShutdownTimeout = 20 * time.Second
	}
	return nil
}

// validateTopology checks the single-node / clustered / external choice
// and derives the node name.
func (c *Config) validateTopology() error {
	c.NATS.URL = trimList(c.NATS.URL)
	c.Cluster.Routes = trimList(c.Cluster.Routes)
	if c.NATS.External() {
		if c.NATS.Listen != "" || c.Cluster.Clustered() || len(c.Cluster.Routes) > 0 {
			return errors.New("nats.url (external NATS) cannot be combined with nats.listen or cluster.* keys: the node embeds no server in external mode")
		}
	}
	if !c.Cluster.Clustered() && (len(c.Cluster.Routes) > 0 || c.Cluster.Name != "") {
		return errors.New("cluster.routes and cluster.name need cluster.listen (the route listener, host:port)")
	}
	if c.Cluster.Clustered() {
		host, port, err := net.SplitHostPort(c.Cluster.Listen)
		if err != nil {
			return fmt.Errorf("cluster.listen %q must be host:port: %w", c.Cluster.Listen, err)
		}
		if err := validateClusterToken(c.Cluster.Token); err != nil {
			return err
		}
		if !c.AllowRemote && !isLoopback(host) {
			return fmt.Errorf("cluster.listen %q is not a loopback address: pass --allow-remote to open the route port beyond this machine", c.Cluster.Listen)
		}
		if c.Cluster.Name == "" {
			c.Cluster.Name = "sentinel"
		}
		if c.Node.Name == "" {
			h, err := os.Hostname()
			if err != nil || h == "" {
				return errors.New("node.name is required when clustered (the host name is unknown)")
			}
			c.Node.Name = h + "-" + port
		}
	}
	if c.Node.Name == "" {
		c.Node.Name = c.NATS.ServerName
	}
	if c.Node.Name == "" {
		c.Node.Name = "sentinel"
	}
	if strings.ContainsAny(c.Node.Name, " \t.*>") {
		return fmt.Errorf("node.name %q must be one token (no spaces, dots or wildcards)", c.Node.Name)
	}
	return nil
}

// MinTokenLen is the shortest API token a node takes from its config.
const MinTokenLen = 32

// validateToken checks a configured API token without ever quoting it.
func validateToken(tok string) error {
	return validateSecret("token (AGENTPROTO_TOKEN)", tok,
		"or unset it and the node generates <home>/daemon-token", "it travels in the Authorization header")
}

// validateClusterToken checks a configured route secret without ever
// quoting it.
func validateClusterToken(tok string) error {
	return validateSecret("cluster.token (AGENTPROTO_CLUSTER_TOKEN)", tok, "the same on every node", "the same on every node")
}

// validateSecret checks a configured secret (empty: none configured): at
// least MinTokenLen printable ASCII characters without spaces. Errors name
// the key and what to do (fix for a short one, why for a bad character),
// never the value.
func validateSecret(key, tok, fix, why string) error {
	if tok == "" {
		return nil
	}
	if len(tok) < MinTokenLen {
		return fmt.Errorf("%s has %d characters, fewer than %d: give a longer secret (e.g. `openssl rand -hex 32`), %s", key, len(tok), MinTokenLen, fix)
	}
	for i := 0; i < len(tok); i++ {
		if tok[i] <= ' ' || tok[i] > '~' {
			return fmt.Errorf("%s must be printable ASCII without spaces (%s)", key, why)
		}
	}
	return nil
}

// Replicas is the replica count of every stream and bucket: bus.replicas
// when set, else 3 in a cluster and 1 alone; external mode caps the
// default at the deployment's server count (servers).
func (c Config) Replicas(servers int) int {
	if c.Bus.Replicas > 0 {
		return c.Bus.Replicas
	}
	switch {
	case c.Cluster.Clustered():
		return 3
	case c.NATS.External():
		return max(1, min(3, servers))
	}
	return 1
}

func trimList(in []string) []string {
	var out []string
	for _, v := range in {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
