package app

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentproto/sentinel/bus/embedded"
)

// ClusterTokenFile holds the route secret of an embedded cluster under
// the home, when cluster.token is empty.
const ClusterTokenFile = "cluster-token"

// ErrClusterTokenRequired refuses to start a node whose cluster.routes
// name other nodes while it has no route secret: a secret of its own
// would match no peer, and its routes would never come up.
var ErrClusterTokenRequired = errors.New("cluster.token is required: cluster.routes names other nodes, and every node of a cluster needs the same route secret")

// routeToken returns the route secret of an embedded cluster (routes
// always authenticate, loopback included): cluster.token when set, else
// <home>/cluster-token. That file is generated (0600) when absent only for
// a node whose routes name no other node (the first node of a cluster, or
// one alone): the others are pointed at it (AGENTPROTO_CLUSTER_TOKEN_FILE)
// or given the same cluster.token; a node whose routes name others and
// that has neither is refused with ErrClusterTokenRequired, which says how
// to make one.
func (a *App) routeToken(cfg Config) (string, error) {
	if cfg.Cluster.Token != "" {
		return cfg.Cluster.Token, nil
	}
	path := filepath.Join(cfg.Home, ClusterTokenFile)
	raw, err := os.ReadFile(path)
	switch {
	case err == nil:
		tok := strings.TrimSpace(string(raw))
		if len(tok) < embedded.MinRouteTokenLen {
			return "", fmt.Errorf("%s holds %d characters, fewer than %d: put a longer secret there (openssl rand -hex 32), the same on every node, or remove it", path, len(tok), embedded.MinRouteTokenLen)
		}
		if err := os.Chmod(path, 0o600); err != nil {
			return "", fmt.Errorf("route secret %s: %w", path, err)
		}
		a.Log.Info("routes authenticate with the route secret in the home (cluster.token is empty)", "file", path)
		return tok, nil
	case !errors.Is(err, os.ErrNotExist):
		return "", fmt.Errorf("read the route secret %s: %w", path, err)
	}
	if peer := otherNode(cfg.Cluster); peer != "" {
		return "", fmt.Errorf("%w (it routes to %s): set cluster.token (AGENTPROTO_CLUSTER_TOKEN, at least %d characters, e.g. `openssl rand -hex 32`) or AGENTPROTO_CLUSTER_TOKEN_FILE on every node; "+
			"or start the first node with no other node in cluster.routes, which generates <home>/%s, and point the others' AGENTPROTO_CLUSTER_TOKEN_FILE at that file",
			ErrClusterTokenRequired, peer, embedded.MinRouteTokenLen, ClusterTokenFile)
	}
	tok, err := loadOrCreateSecret(cfg.Home, ClusterTokenFile)
	if err != nil {
		return "", err
	}
	a.Log.Warn("cluster.token is empty: generated a route secret; every other node of this cluster must use the same (AGENTPROTO_CLUSTER_TOKEN_FILE=<this file>, or its content as cluster.token)",
		"file", path)
	return tok, nil
}

// otherNode returns the first route of c that names another node than
// this one (its listen or advertise address; a loopback or unspecified
// host on the listen port counts as this node), "" when none does.
func otherNode(c ClusterConfig) string {
	self := func(host, port string) bool {
		for _, addr := range []string{c.Listen, c.Advertise} {
			h, p, err := net.SplitHostPort(addr)
			if err != nil || p != port {
				continue
			}
			if strings.EqualFold(h, host) || (localHost(h) && localHost(host)) {
				return true
			}
		}
		return false
	}
	for _, raw := range c.Routes {
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" {
			return raw // the embedded server refuses it with its own error
		}
		if !self(u.Hostname(), u.Port()) {
			u.User = nil
			return u.String()
		}
	}
	return ""
}

// localHost reports whether host names this machine for a listener:
// loopback, localhost or the unspecified address.
func localHost(host string) bool {
	if isLoopback(host) {
		return true
	}
	ip := net.ParseIP(host)
	return host == "" || (ip != nil && ip.IsUnspecified())
}
