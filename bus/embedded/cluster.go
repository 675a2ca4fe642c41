package embedded

import (
	"crypto/sha256"
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
	// Token is the route secret: routes authenticate with a user and
	// password, so the node derives both from it. Never logged.
	Token string
	// Advertise, when set, is the host:port other nodes dial for this
	// node's routes (behind NAT or in containers).
	Advertise string
}

// Enabled reports whether a cluster is configured.
func (c Cluster) Enabled() bool { return c.Listen != "" }

// RoutePassword derives the route password from the cluster token, so the
// token itself never travels and URL-unsafe characters do no harm.
func RoutePassword(token string) string {
	sum := sha256.Sum256([]byte("sentinel-route:" + token))
	return hex.EncodeToString(sum[:])
}

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
	if c.Token == "" && !isLoopbackHost(host) {
		return fmt.Errorf("embedded: cluster.listen %q is not a loopback address and cluster.token is empty: set cluster.token (AGENTPROTO_CLUSTER_TOKEN), the same on every node", c.Listen)
	}
	if err := refuseSingleNodeStore(storeDir); err != nil {
		return err
	}
	// Routes ping every RoutePingInterval (RouteMaxPingsOut missed: gone), not
	// every 2 minutes: a node cut off must find out in seconds (runtime/cluster).
	opts.Cluster = server.ClusterOpts{Name: c.Name, Host: host, Port: p, Advertise: c.Advertise, ConnectRetries: -1,
		PingInterval: RoutePingInterval, MaxPingsOut: RouteMaxPingsOut}
	pass := ""
	if c.Token != "" {
		pass = RoutePassword(c.Token)
		opts.Cluster.Username, opts.Cluster.Password = routeUser, pass
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
		if pass != "" {
			u.User = url.UserPassword(routeUser, pass)
		}
		opts.Routes = append(opts.Routes, u)
	}
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

func isLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
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
