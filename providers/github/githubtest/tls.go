package githubtest

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"sync"
	"time"
)

// mitmHosts are the hosts the proxy tunnels to the fake (port 443).
var mitmHosts = map[string]bool{"api.github.com:443": true, "github.com:443": true}

// certs is a per-server CA and a leaf for api.github.com signed by it.
type certs struct {
	caPEM []byte
	pool  *x509.CertPool
	leaf  tls.Certificate
}

func newCerts() (*certs, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "githubtest fake CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	leafTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "api.github.com"},
		DNSNames:     []string{"api.github.com", "github.com", "localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, ca, &leafKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return &certs{
		caPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		pool:  pool,
		leaf:  tls.Certificate{Certificate: [][]byte{leafDER}, PrivateKey: leafKey},
	}, nil
}

// proxyHandler answers CONNECT for the GitHub hosts by handing the hijacked
// connection to the fake's TLS listener; anything else is recorded as
// unexpected and refused.
func (s *Server) proxyHandler(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodConnect || !mitmHosts[r.Host] {
		s.recordUnexpected(r.Method, "proxy "+r.Host+r.URL.String())
		http.Error(w, "githubtest proxy: only CONNECT to api.github.com:443", http.StatusForbidden)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		http.Error(w, "no hijack", http.StatusInternalServerError)
		return
	}
	conn, brw, err := hj.Hijack()
	if err != nil {
		return
	}
	if _, err := conn.Write([]byte("HTTP/1.1 200 Connection Established\r\n\r\n")); err != nil {
		_ = conn.Close()
		return
	}
	c := net.Conn(conn)
	if brw.Reader.Buffered() > 0 {
		c = &bufferedConn{Conn: conn, r: brw.Reader}
	}
	if !s.tunnels.push(c) {
		_ = conn.Close()
	}
}

type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (b *bufferedConn) Read(p []byte) (int, error) { return b.r.Read(p) }

// chanListener is a net.Listener fed with tunnelled connections.
type chanListener struct {
	ch     chan net.Conn
	once   sync.Once
	closed chan struct{}
	addr   net.Addr
}

func newChanListener(addr net.Addr) *chanListener {
	return &chanListener{ch: make(chan net.Conn), closed: make(chan struct{}), addr: addr}
}

func (l *chanListener) push(c net.Conn) bool {
	select {
	case l.ch <- c:
		return true
	case <-l.closed:
		return false
	}
}

// Accept implements net.Listener.
func (l *chanListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ch:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

// Close implements net.Listener.
func (l *chanListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

// Addr implements net.Listener.
func (l *chanListener) Addr() net.Addr { return l.addr }

func (c *certs) serverConfig() *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{c.leaf}, NextProtos: []string{"http/1.1"}, MinVersion: tls.VersionTLS12}
}

func tlsListener(l net.Listener, c *certs) net.Listener { return tls.NewListener(l, c.serverConfig()) }
