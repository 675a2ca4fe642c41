package app

import (
	"errors"
	"fmt"
	"net"
	"path/filepath"

	"github.com/agentproto/sentinel/ingress"
)

// ErrInsecureRemote refuses a listener beyond loopback without TLS: the
// bearer token, the route credentials and every replicated secret would
// cross the network in clear.
var ErrInsecureRemote = errors.New("a listener beyond loopback needs TLS")

// validateTransport checks TLS: the API listener's pair (tls_cert and
// tls_key together), and that every listener beyond loopback (listen,
// cluster.listen, nats.listen) has TLS unless allow_insecure_remote. The
// route TLS files are checked by the embedded server at start.
func (c *Config) validateTransport() error {
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return errors.New("set both tls_cert and tls_key (the API listener's certificate and key), or neither")
	}
	if c.AllowInsecureRemote {
		return nil
	}
	if ls := c.insecureRemote(); len(ls) > 0 {
		l := ls[0]
		return fmt.Errorf("%w: %s %q is beyond loopback without TLS (%s); set %s, or allow_insecure_remote (AGENTPROTO_ALLOW_INSECURE_REMOTE=true) to accept that anyone on the path reads it",
			ErrInsecureRemote, l.key, l.addr, l.carries, l.fix)
	}
	return nil
}

// plainListener is a listener beyond loopback that has no TLS.
type plainListener struct {
	key, addr, carries, fix string
}

// insecureRemote lists the listeners beyond loopback without TLS.
func (c *Config) insecureRemote() []plainListener {
	var out []plainListener
	remote := func(addr string) bool {
		host, _, err := net.SplitHostPort(addr)
		return err == nil && !isLoopback(host)
	}
	if remote(c.Listen) && c.TLSCert == "" {
		out = append(out, plainListener{"listen", c.Listen, "the API bearer token and every answer", "tls_cert and tls_key"})
	}
	if c.Cluster.Clustered() && remote(c.Cluster.Listen) && c.Cluster.TLSCert == "" {
		out = append(out, plainListener{"cluster.listen", c.Cluster.Listen, "the route credentials and every replicated record and secret", "cluster.tls_cert, cluster.tls_key and cluster.tls_ca"})
	}
	if c.NATS.Listen != "" && remote(c.NATS.Listen) && c.NATS.ListenTLSCert == "" {
		out = append(out, plainListener{"nats.listen", c.NATS.Listen, "the NATS token and every record and secret", "nats.listen_tls_cert and nats.listen_tls_key"})
	}
	return out
}

// warnInsecure logs, at start, each listener allow_insecure_remote lets
// run in clear beyond loopback.
func (a *App) warnInsecure() {
	for _, l := range a.Cfg.insecureRemote() {
		a.Log.Warn("allow_insecure_remote: a listener beyond loopback runs without TLS; anyone on the path reads "+l.carries,
			"key", l.key, "addr", l.addr, "fix", l.fix)
	}
}

// listen opens the API listener: TLS with tls_cert and tls_key, else
// plain.
func (a *App) listen() error {
	var err error
	if a.Cfg.TLSCert != "" {
		tc, terr := ingress.TLSConfig(a.Cfg.TLSCert, a.Cfg.TLSKey)
		if terr != nil {
			return terr
		}
		a.ln, err = ingress.ListenTLS(a.Cfg.Listen, tc)
	} else {
		a.ln, err = ingress.Listen(a.Cfg.Listen)
	}
	return err
}

// scheme is the API's URL scheme.
func (a *App) scheme() string {
	if a.Cfg.TLSCert != "" {
		return "https"
	}
	return "http"
}

// absPath is p made absolute ("" stays ""; a path that cannot be made
// absolute stays as it is).
func absPath(p string) string {
	if p == "" {
		return ""
	}
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}
