package bus

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// ClientConfig is how a node connects to an existing NATS deployment
// (external mode). Only one credential kind may be set.
type ClientConfig struct {
	// URLs are the servers' client URLs (nats://host:port or tls://...).
	URLs []string
	// Creds is a .creds file (JWT and nkey seed).
	Creds string
	// NKey is a file holding an nkey seed (SU...).
	NKey string
	// User and Password authenticate with a user and password.
	User, Password string
	// Token authenticates with a token.
	Token string
	// TLSCA, TLSCert and TLSKey configure TLS (a CA to trust; a client
	// certificate and key for mutual TLS).
	TLSCA, TLSCert, TLSKey string
	// Name is the connection name shown in the server's monitoring.
	Name string
	// ReconnectWait is the pause between reconnect attempts (default
	// 500ms).
	ReconnectWait time.Duration
	// InOrder tries the URLs in the order given (by default the client
	// shuffles them).
	InOrder bool
}

// MinServerVersion is the oldest nats-server the node works with: it needs
// per-message TTLs and KV limit markers (2.11).
const MinServerVersion = "2.11.0"

// ErrServerTooOld is returned by Dial when the server predates
// MinServerVersion.
var ErrServerTooOld = errors.New("bus: the NATS server is too old (sentinel needs nats-server " + MinServerVersion + " or later)")

// Validate checks that one credential kind at most is set.
func (c ClientConfig) Validate() error {
	if len(c.URLs) == 0 {
		return errors.New("bus: nats.url is empty")
	}
	n := 0
	for _, set := range []bool{c.Creds != "", c.NKey != "", c.User != "" || c.Password != "", c.Token != ""} {
		if set {
			n++
		}
	}
	if n > 1 {
		return errors.New("bus: set one of nats.creds, nats.nkey, nats.user/nats.password or nats.client_token")
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return errors.New("bus: set both nats.tls_cert and nats.tls_key, or neither")
	}
	return nil
}

// Dial connects to an external NATS deployment, reconnecting forever once
// connected, and checks the server version.
func Dial(ctx context.Context, c ClientConfig) (*nats.Conn, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	wait := c.ReconnectWait
	if wait <= 0 {
		wait = 500 * time.Millisecond
	}
	opts := []nats.Option{nats.Name(c.Name), nats.MaxReconnects(-1), nats.ReconnectWait(wait), nats.RetryOnFailedConnect(false)}
	if c.InOrder {
		opts = append(opts, nats.DontRandomize())
	}
	switch {
	case c.Creds != "":
		opts = append(opts, nats.UserCredentials(c.Creds))
	case c.NKey != "":
		o, err := nats.NkeyOptionFromSeed(c.NKey)
		if err != nil {
			return nil, fmt.Errorf("bus: nats.nkey: %w", err)
		}
		opts = append(opts, o)
	case c.User != "" || c.Password != "":
		opts = append(opts, nats.UserInfo(c.User, c.Password))
	case c.Token != "":
		opts = append(opts, nats.Token(c.Token))
	}
	if c.TLSCA != "" {
		opts = append(opts, nats.RootCAs(c.TLSCA))
	}
	if c.TLSCert != "" {
		opts = append(opts, nats.ClientCert(c.TLSCert, c.TLSKey))
	}
	if dl, ok := ctx.Deadline(); ok {
		opts = append(opts, nats.Timeout(time.Until(dl)))
	}
	nc, err := nats.Connect(strings.Join(c.URLs, ","), opts...)
	if err != nil {
		return nil, fmt.Errorf("bus: connect to %s: %w", redactURLs(c.URLs), scrub(err, c.URLs))
	}
	if v := nc.ConnectedServerVersion(); !versionAtLeast(v, MinServerVersion) {
		nc.Close()
		return nil, fmt.Errorf("%w: %s is %s", ErrServerTooOld, nc.ConnectedUrlRedacted(), v)
	}
	return nc, nil
}

// ServerCount is how many servers the connection knows of (the URLs
// given and those the cluster announced): the replica ceiling in external
// mode.
func ServerCount(nc *nats.Conn) int {
	seen := map[string]bool{}
	for _, u := range nc.Servers() {
		seen[u] = true
	}
	if len(seen) == 0 {
		return 1
	}
	return len(seen)
}

// WaitForJetStream waits until JetStream answers an account request: in
// a cluster, until a meta leader is elected. It returns the last error
// when ctx ends first.
func WaitForJetStream(ctx context.Context, nc *nats.Conn) error {
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("bus: jetstream: %w", err)
	}
	var last error
	for {
		actx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := js.AccountInfo(actx)
		cancel()
		if err == nil {
			return nil
		}
		last = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("bus: JetStream is not available (no meta leader: are a majority of the cluster's servers up?): %w", last)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// versionAtLeast compares dotted versions numerically ("2.11.3" >=
// "2.11.0"); pre-release suffixes are ignored.
func versionAtLeast(have, want string) bool {
	hp, wp := versionParts(have), versionParts(want)
	for i := 0; i < 3; i++ {
		if hp[i] != wp[i] {
			return hp[i] > wp[i]
		}
	}
	return true
}

func versionParts(v string) [3]int {
	var out [3]int
	v = strings.TrimPrefix(v, "v")
	if i := strings.IndexAny(v, "-+"); i >= 0 {
		v = v[:i]
	}
	for i, p := range strings.SplitN(v, ".", 3) {
		n, _ := strconv.Atoi(p)
		out[i] = n
	}
	return out
}
