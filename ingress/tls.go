package ingress

import (
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"sync"
	"time"
)

// certCheckEvery bounds how often a TLS listener looks whether its
// certificate files changed (a renewal is picked up without a restart).
const certCheckEvery = 30 * time.Second

// keyPair serves a certificate from PEM files, reloading them when their
// modification times change (checked at most every certCheckEvery, on a
// handshake). A reload that fails keeps the pair it had and is retried at
// the next check.
type keyPair struct {
	certFile, keyFile string
	now               func() time.Time

	mu      sync.Mutex
	cert    *tls.Certificate
	stamp   [2]time.Time
	checked time.Time
}

func (k *keyPair) load() error {
	ci, err := os.Stat(k.certFile)
	if err != nil {
		return fmt.Errorf("tls_cert: %w", err)
	}
	ki, err := os.Stat(k.keyFile)
	if err != nil {
		return fmt.Errorf("tls_key: %w", err)
	}
	stamp := [2]time.Time{ci.ModTime(), ki.ModTime()}
	if k.cert != nil && stamp == k.stamp {
		return nil
	}
	c, err := tls.LoadX509KeyPair(k.certFile, k.keyFile)
	if err != nil {
		return fmt.Errorf("tls_cert/tls_key: %w", err)
	}
	k.cert, k.stamp = &c, stamp
	return nil
}

func (k *keyPair) get(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if now := k.now(); now.Sub(k.checked) >= certCheckEvery {
		k.checked = now
		_ = k.load() // a failed reload keeps the pair in use
	}
	return k.cert, nil
}

// TLSConfig returns the API listener's TLS configuration over the PEM
// files certFile and keyFile (TLS 1.2 or later, HTTP/1.1): loaded now (an
// error names the file), then reloaded when the files change, so a renewed
// certificate is served without a restart.
func TLSConfig(certFile, keyFile string) (*tls.Config, error) {
	k := &keyPair{certFile: certFile, keyFile: keyFile, now: time.Now}
	if err := k.load(); err != nil {
		return nil, err
	}
	k.checked = k.now()
	return &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: k.get, NextProtos: []string{"http/1.1"}}, nil
}

// ListenTLS opens the listener on addr and serves TLS on it with tc.
func ListenTLS(addr string, tc *tls.Config) (net.Listener, error) {
	ln, err := Listen(addr)
	if err != nil {
		return nil, err
	}
	return tls.NewListener(ln, tc), nil
}
