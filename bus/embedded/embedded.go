// Package embedded runs a nats-server with JetStream in-process. It is the
// only package that imports nats-server. By default the server opens no
// network listener: clients reach it in-process. A client listener, when
// configured, always requires the listen token, and may require TLS.
package embedded

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// Config configures the embedded server.
type Config struct {
	// StoreDir is the JetStream storage folder; it is created 0700.
	StoreDir string `mapstructure:"store_dir"`
	// SyncAlways fsyncs every write (default true in DefaultConfig). When
	// false the server's own interval (2 minutes) applies and an acked write
	// can be lost on power failure.
	SyncAlways bool `mapstructure:"sync_always"`
	// Listen, when non-empty ("host:port"), opens a client listener so other
	// processes can connect; empty means in-process only. A listener always
	// requires ListenToken.
	Listen string `mapstructure:"listen"`
	// ListenToken is the secret every client of the listener presents
	// (nats.Token). The node fills it from <home>/nats-token (0600,
	// generated when absent) when the config leaves it empty.
	ListenToken string `mapstructure:"listen_token"`
	// ListenTLSCert and ListenTLSKey, both set, make the client listener
	// require TLS with this certificate (PEM files).
	ListenTLSCert string `mapstructure:"listen_tls_cert"`
	ListenTLSKey  string `mapstructure:"listen_tls_key"`
	// ServerName names the server (default "sentinel").
	ServerName string `mapstructure:"server_name"`
	// ReadyTimeout bounds start-up (default 30s).
	ReadyTimeout time.Duration `mapstructure:"ready_timeout"`
	// MaxStore caps JetStream file storage in bytes (0: the server's
	// default, a share of the disk). Writes past it fail with a named error.
	MaxStore int64 `mapstructure:"max_store"`

	// Cluster joins other nodes' servers (set by the node from the
	// cluster.* keys, not a nats.* key).
	Cluster Cluster `mapstructure:"-"`
}

// DefaultConfig returns the defaults: fsync on every write, no listener.
func DefaultConfig() Config {
	return Config{SyncAlways: true, ServerName: "sentinel", ReadyTimeout: 30 * time.Second}
}

// ErrListenTokenRequired is returned by Start for a client listener with
// no token: an open NATS port hands out every secret the node keeps.
var ErrListenTokenRequired = errors.New("embedded: nats.listen requires nats.listen_token (the node generates <home>/nats-token when it is empty)")

// Server is a running embedded nats-server. Restart replaces the
// nats-server inside it (the store on disk stays); in-process clients
// made by Connect reconnect to the new one by themselves.
type Server struct {
	mu sync.RWMutex
	ns *server.Server
	// build makes a fresh nats-server from the start-time configuration;
	// what it reports as fatal (a listener it cannot bind) is sent on
	// fatal without blocking.
	build     func(fatal chan<- string) (*server.Server, error)
	ready     time.Duration
	storeDir  string
	token     string
	clustered bool
	// sysToken puts an in-process client in the system account (peer
	// removal, see system.go); set on clustered servers only, never leaves
	// the process.
	sysToken string
}

// Start starts the server and waits until it accepts connections.
func Start(cfg Config, log *slog.Logger) (*Server, error) {
	if cfg.StoreDir == "" {
		return nil, errors.New("embedded: store dir is required")
	}
	if err := os.MkdirAll(cfg.StoreDir, 0o700); err != nil {
		return nil, fmt.Errorf("embedded: create store dir: %w", err)
	}
	if err := os.Chmod(cfg.StoreDir, 0o700); err != nil {
		return nil, fmt.Errorf("embedded: chmod store dir: %w", err)
	}
	if cfg.ServerName == "" {
		cfg.ServerName = "sentinel"
	}
	if cfg.ReadyTimeout <= 0 {
		cfg.ReadyTimeout = 30 * time.Second
	}
	if cfg.Cluster.Enabled() && cfg.Listen == "" {
		// nats-server starts routes only once its client listener is up:
		// a clustered server listens on a random loopback port, behind a
		// token only this process knows.
		cfg.Listen = "127.0.0.1:-1"
		if cfg.ListenToken == "" {
			cfg.ListenToken = randomToken()
		}
	}
	srv := &Server{ready: cfg.ReadyTimeout, storeDir: cfg.StoreDir, clustered: cfg.Cluster.Enabled()}
	if srv.clustered {
		srv.sysToken = randomToken()
	}
	first, err := serverOptions(cfg)
	if err != nil {
		return nil, err
	}
	srv.token = first.Authorization
	srv.build = func(fatal chan<- string) (*server.Server, error) {
		opts, err := serverOptions(cfg)
		if err != nil {
			return nil, err
		}
		opts.NoLog = log == nil
		var auth *clientAuth
		if srv.clustered {
			auth = newClientAuth(opts, srv.sysToken)
		}
		ns, err := server.NewServer(opts)
		if err != nil {
			return nil, fmt.Errorf("embedded: new server: %w", err)
		}
		l := log
		if l == nil {
			l = slog.New(slog.DiscardHandler)
		}
		ns.SetLoggerV2(&slogAdapter{log: l, fatal: fatal}, false, false, false)
		if auth != nil {
			auth.ns = ns
		}
		return ns, nil
	}
	ns, err := srv.start()
	if err != nil {
		return nil, err
	}
	srv.ns = ns
	return srv, nil
}

// serverOptions translates cfg into nats-server options.
func serverOptions(cfg Config) (*server.Options, error) {
	opts := &server.Options{
		ServerName: cfg.ServerName,
		JetStream:  true,
		StoreDir:   cfg.StoreDir,
		DontListen: cfg.Listen == "",
		NoSigs:     true,
		SyncAlways: cfg.SyncAlways,
	}
	if cfg.MaxStore > 0 {
		opts.JetStreamMaxStore = cfg.MaxStore
	}
	if err := applyListener(opts, cfg); err != nil {
		return nil, err
	}
	if err := applyCluster(opts, cfg.Cluster, cfg.StoreDir); err != nil {
		return nil, err
	}
	return opts, nil
}

// ErrNotStarted is a nats-server that reported a fatal error while
// starting (a client or route listener it could not bind): it is shut
// down at once instead of waited for until the ready timeout.
var ErrNotStarted = errors.New("embedded: nats-server failed to start")

// readyPoll is how often start asks a starting server whether it is
// ready, between looks at what it reported as fatal.
const readyPoll = 50 * time.Millisecond

// start builds a nats-server and waits until it accepts connections, for
// at most s.ready, or until it reports a fatal error.
func (s *Server) start() (*server.Server, error) {
	fatal := make(chan string, 1)
	ns, err := s.build(fatal)
	if err != nil {
		return nil, err
	}
	go ns.Start()
	deadline := time.Now().Add(s.ready)
	for !ns.ReadyForConnections(readyPoll) {
		select {
		case msg := <-fatal:
			ns.Shutdown()
			return nil, fmt.Errorf("%w: %s", ErrNotStarted, msg)
		default:
		}
		if time.Now().After(deadline) {
			ns.Shutdown()
			return nil, errors.New("embedded: nats-server not ready in time (is another node using this store dir?)")
		}
	}
	return ns, nil
}

// current is the running nats-server.
func (s *Server) current() *server.Server {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.ns
}

// JetStreamEnabled reports whether JetStream runs. nats-server disables
// it for good when a write meets a full filesystem; only a restart
// (Restart) brings it back.
func (s *Server) JetStreamEnabled() bool { return s.current().JetStreamEnabled() }

// Restart shuts the nats-server down (flushing what it can) and starts a
// new one on the same store and configuration. In-process clients see a
// disconnect and reconnect to the new server. It is the way back after
// nats-server disabled JetStream (a full disk), once space has returned.
func (s *Server) Restart() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ns.Shutdown()
	s.ns.WaitForShutdown()
	ns, err := s.start()
	if err != nil {
		return fmt.Errorf("embedded: restart: %w", err)
	}
	s.ns = ns
	return nil
}

// InProcessConn implements nats.InProcessConnProvider over whichever
// nats-server runs now, so a client reconnects across Restart.
func (s *Server) InProcessConn() (net.Conn, error) { return s.current().InProcessConn() }

func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// applyListener configures the client listener: address, token, TLS.
func applyListener(opts *server.Options, cfg Config) error {
	if cfg.Listen == "" {
		return nil
	}
	host, port, err := net.SplitHostPort(cfg.Listen)
	if err != nil {
		return fmt.Errorf("embedded: listen %q: %w", cfg.Listen, err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return fmt.Errorf("embedded: listen port %q: %w", port, err)
	}
	if p == 0 {
		// Port 0 means "any free port", as for every other listener of the
		// node; nats-server reads 0 as its default 4222 and wants -1.
		p = server.RANDOM_PORT
	}
	opts.Host, opts.Port = host, p
	if cfg.ListenToken == "" {
		return ErrListenTokenRequired
	}
	opts.Authorization = cfg.ListenToken
	switch {
	case cfg.ListenTLSCert != "" && cfg.ListenTLSKey != "":
		tc, err := server.GenTLSConfig(&server.TLSConfigOpts{CertFile: cfg.ListenTLSCert, KeyFile: cfg.ListenTLSKey})
		if err != nil {
			return fmt.Errorf("embedded: nats.listen_tls_cert/nats.listen_tls_key: %w", err)
		}
		opts.TLSConfig, opts.TLS = tc, true
		opts.TLSTimeout = 2
	case cfg.ListenTLSCert != "" || cfg.ListenTLSKey != "":
		return errors.New("embedded: set both nats.listen_tls_cert and nats.listen_tls_key, or neither")
	}
	return nil
}

// Connect returns an in-process client connection.
func (s *Server) Connect(name string) (*nats.Conn, error) {
	opts := []nats.Option{nats.InProcessServer(s), nats.Name(name), nats.MaxReconnects(-1),
		nats.ReconnectWait(100 * time.Millisecond)}
	if s.token != "" {
		opts = append(opts, nats.Token(s.token))
	}
	nc, err := nats.Connect("", opts...)
	if err != nil {
		return nil, fmt.Errorf("embedded: connect: %w", err)
	}
	return nc, nil
}

// Clustered reports whether the server joins a cluster.
func (s *Server) Clustered() bool { return s.clustered }

// Name is the server's name.
func (s *Server) Name() string { return s.current().Name() }

// ClientURL returns the client URL when a listener is configured.
func (s *Server) ClientURL() string { return s.current().ClientURL() }

// Shutdown stops the server, flushing JetStream state to disk, and waits.
func (s *Server) Shutdown() {
	if s == nil {
		return
	}
	ns := s.current()
	if ns == nil {
		return
	}
	ns.Shutdown()
	ns.WaitForShutdown()
}

// slogAdapter is nats-server's logger over slog. What the server reports
// as fatal is also sent on fatal (without blocking), so a start that
// cannot succeed ends at once.
type slogAdapter struct {
	log   *slog.Logger
	fatal chan<- string
}

func (a *slogAdapter) Noticef(format string, v ...any) {
	a.log.Debug(fmt.Sprintf(format, v...))
}
func (a *slogAdapter) Warnf(format string, v ...any) {
	a.log.Warn(fmt.Sprintf(format, v...))
}
func (a *slogAdapter) Fatalf(format string, v ...any) {
	msg := fmt.Sprintf(format, v...)
	a.log.Error(msg)
	select {
	case a.fatal <- msg:
	default:
	}
}
func (a *slogAdapter) Errorf(format string, v ...any) {
	a.log.Error(fmt.Sprintf(format, v...))
}
func (a *slogAdapter) Debugf(format string, v ...any) {}
func (a *slogAdapter) Tracef(format string, v ...any) {}

// MaxStore is JetStream's file storage limit in bytes: nats.max_store, or
// the share of the disk nats-server took at start; 0 while JetStream is
// off.
func (s *Server) MaxStore() int64 {
	c := s.current().JetStreamConfig()
	if c == nil {
		return 0
	}
	return c.MaxStore
}

// StoreDir is the JetStream store folder.
func (s *Server) StoreDir() string { return s.storeDir }
