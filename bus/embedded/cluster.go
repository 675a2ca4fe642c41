package embedded

import (
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// routeUser is the user name every node's route listener accepts; the
// password is derived from the cluster token (RoutePassword).
const routeUser = "sentinel-route"

// Cluster configures the route listener that joins embedded servers into
// one JetStream cluster. The zero value means a single node.
type Cluster struct {
	// Name is the cluster name (every node of one cluster uses the same).
	Name string
	// Listen is host:port of the route listener.
	Listen string
	// Routes are the peers' route URLs (nats://host:port); a node may list
	// itself.
	Routes []string
	// Token is the route secret, required (at least MinRouteTokenLen
	// characters): every route listener, loopback included, authenticates
	// its routes with a user and password the node derives from it. Never
	// logged.
	Token string
	// Advertise, when set, is the host:port other nodes dial for this
	// node's routes (behind NAT or in containers).
	Advertise string
	// TLSCert and TLSKey (PEM files) are this node's route certificate,
	// and TLSCA the CA that signs every node's. Set, all three: every
	// route is TLS, verified both ways (a node accepts only a route that
	// presents a certificate of the CA, and dials only peers whose
	// certificate the CA signed for the route URL's host); the route
	// credentials then travel inside TLS.
	TLSCert, TLSKey, TLSCA string
}

// TLS reports whether route TLS is configured.
func (c Cluster) TLS() bool { return c.TLSCert != "" || c.TLSKey != "" || c.TLSCA != "" }

// Enabled reports whether a cluster is configured.
func (c Cluster) Enabled() bool { return c.Listen != "" }

// RoutePassword derives the route password from the cluster token, so the
// token itself never travels and URL-unsafe characters do no harm.
func RoutePassword(token string) string {
	sum := sha256.Sum256([]byte("sentinel-route:" + token))
	return hex.EncodeToString(sum[:])
}

// MinRouteTokenLen is the shortest route secret a cluster takes (the API
// token's minimum).
const MinRouteTokenLen = 32

// ErrRouteTokenRequired is returned by Start for a cluster without a route
// secret: a route listener that takes any route hands every record and
// secret to whoever reaches its port, and lets them make a node run
// commands, loopback included (any local user).
var ErrRouteTokenRequired = errors.New("embedded: a cluster needs a route secret (cluster.token)")

// ErrRouteTokenTooShort is returned by Start for a route secret shorter
// than MinRouteTokenLen.
var ErrRouteTokenTooShort = fmt.Errorf("embedded: cluster.token is shorter than %d characters", MinRouteTokenLen)

// ErrSingleNodeStore is returned when a clustered server would start on a
// store written by a single node: JetStream does not move standalone
// streams into a cluster.
var ErrSingleNodeStore = errors.New("embedded: this store was written by a single node and cannot join a cluster")

// RoutePingInterval and RouteMaxPingsOut bound how long a route to a peer
// that went silent (a partition that drops packets rather than refusing
// them) stays up: about RoutePingInterval x RouteMaxPingsOut. nats-server's
// own route pings (every 30 s, two outstanding) keep such a route, and the
// requests it swallows (direct gets, API calls answered by the lost peer),
// for a minute or more; the nodes' member TTL is 6 s by default.
const (
	RoutePingInterval = 2 * time.Second
	RouteMaxPingsOut  = 3
)

// applyCluster configures routes on opts.
func applyCluster(opts *server.Options, c Cluster, storeDir string) error {
	if !c.Enabled() {
		return nil
	}
	if c.Name == "" {
		return errors.New("embedded: cluster.name is required with cluster.listen")
	}
	if strings.ContainsAny(c.Name, " .*>") {
		return fmt.Errorf("embedded: cluster.name %q must be one token (no spaces, dots or wildcards)", c.Name)
	}
	host, port, err := net.SplitHostPort(c.Listen)
	if err != nil {
		return fmt.Errorf("embedded: cluster.listen %q: %w", c.Listen, err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return fmt.Errorf("embedded: cluster.listen port %q: %w", port, err)
	}
	switch {
	case c.Token == "":
		return ErrRouteTokenRequired
	case len(c.Token) < MinRouteTokenLen:
		return fmt.Errorf("%w (it has %d)", ErrRouteTokenTooShort, len(c.Token))
	}
	if err := refuseSingleNodeStore(storeDir); err != nil {
		return err
	}
	// Routes ping every RoutePingInterval (RouteMaxPingsOut missed: gone), not
	// every 2 minutes: a node cut off must find out in seconds (runtime/cluster).
	opts.Cluster = server.ClusterOpts{Name: c.Name, Host: host, Port: p, Advertise: c.Advertise, ConnectRetries: -1,
		PingInterval: RoutePingInterval, MaxPingsOut: RouteMaxPingsOut}
	pass := RoutePassword(c.Token)
	opts.Cluster.Username, opts.Cluster.Password = routeUser, pass
	if err := applyRouteTLS(opts, c); err != nil {
		return err
	}
	for _, raw := range c.Routes {
		raw = strings.TrimSpace(raw)
		if raw == "" {
			continue
		}
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" || (u.Scheme != "nats" && u.Scheme != "nats-route") {
			return fmt.Errorf("embedded: cluster.routes entry %q must be nats://host:port", redactURL(raw))
		}
		if u.User != nil {
			return fmt.Errorf("embedded: cluster.routes entry %q must not carry credentials: set cluster.token", redactURL(raw))
		}
		u.User = url.UserPassword(routeUser, pass)
		opts.Routes = append(opts.Routes, u)
	}
	return nil
}

// RouteTLSTimeout bounds a route's TLS handshake (seconds).
const RouteTLSTimeout = 2

// applyRouteTLS configures route TLS as nats-server's own configuration
// does for a cluster block: mutual, with the CA as the pool of both sides
// (a node accepts routes and dials them).
func applyRouteTLS(opts *server.Options, c Cluster) error {
	if !c.TLS() {
		return nil
	}
	if c.TLSCert == "" || c.TLSKey == "" || c.TLSCA == "" {
		return errors.New("embedded: route TLS needs cluster.tls_cert, cluster.tls_key and cluster.tls_ca together (the CA signs every node's certificate)")
	}
	tc, err := server.GenTLSConfig(&server.TLSConfigOpts{CertFile: c.TLSCert, KeyFile: c.TLSKey, CaFile: c.TLSCA, Verify: true,
		Timeout: RouteTLSTimeout, MinVersion: tls.VersionTLS12})
	if err != nil {
		return fmt.Errorf("embedded: cluster.tls_cert/cluster.tls_key/cluster.tls_ca: %w", err)
	}
	tc.ClientAuth = tls.RequireAndVerifyClientCert
	tc.RootCAs = tc.ClientCAs
	opts.Cluster.TLSConfig, opts.Cluster.TLSTimeout = tc, RouteTLSTimeout
	return nil
}

// refuseSingleNodeStore refuses a store that holds standalone streams and
// no cluster metadata.
func refuseSingleNodeStore(storeDir string) error {
	streams, err := os.ReadDir(filepath.Join(storeDir, "jetstream", "$G", "streams"))
	if err != nil || len(streams) == 0 {
		return nil
	}
	if _, err := os.Stat(filepath.Join(storeDir, "jetstream", "$SYS", "_js_")); err == nil {
		return nil
	}
	return fmt.Errorf("%w: %s holds %d single-node streams; start the clustered node on a fresh home (or nats.store_dir), "+
		"after delivering what waits (see docs/cluster.md, \"From one node to three\")", ErrSingleNodeStore, storeDir, len(streams))
}

// redactURL drops userinfo and query from a URL for messages.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "<unparseable URL>"
	}
	u.User, u.RawQuery = nil, ""
	return u.String()
}
