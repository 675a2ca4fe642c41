package cli

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
)

// EnvTLSCA names a PEM file of CA certificates the client verbs trust for
// https nodes, besides the system's.
const EnvTLSCA = "AGENTPROTO_TLS_CA"

// EnvAllowInsecureRemote, true, lets the client verbs send the API token
// over plain http to a host beyond loopback (the node's own
// allow_insecure_remote key, read from the environment).
const EnvAllowInsecureRemote = "AGENTPROTO_ALLOW_INSECURE_REMOTE"

// ErrInsecureURL refuses to send the API token over plain http to a host
// beyond loopback: anyone on the path would read it.
var ErrInsecureURL = errors.New("refusing to send the API token over plain http beyond loopback")

// checkTokenTransport refuses a node URL that would carry the token in
// clear beyond this machine, unless AGENTPROTO_ALLOW_INSECURE_REMOTE is
// true. The error names the host, never the token.
func checkTokenTransport(urls []string, token string) error {
	if token == "" {
		return nil
	}
	if ok, _ := strconv.ParseBool(os.Getenv(EnvAllowInsecureRemote)); ok {
		return nil
	}
	for _, raw := range urls {
		u, err := url.Parse(raw)
		if err != nil || u.Scheme != "http" || loopbackHost(u.Hostname()) {
			continue
		}
		return fmt.Errorf("%w: %s is plain http to %s; use https:// (the node's tls_cert and tls_key; %s trusts a private CA), or set %s=true to send it in clear anyway",
			ErrInsecureURL, u.Scheme+"://"+u.Host, u.Hostname(), EnvTLSCA, EnvAllowInsecureRemote)
	}
	return nil
}

// loopbackHost reports whether host is this machine's loopback.
func loopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// clientTLS is the TLS configuration of the client verbs: the system's
// CAs plus AGENTPROTO_TLS_CA's, or, with pin set (the node's certificate
// file named by daemon.json, or its tls_cert), exactly the certificates
// in that file, whatever host they name (the URL is the node's loopback
// address). nil when neither applies.
func clientTLS(pin string) (*tls.Config, error) {
	if pin != "" {
		return pinnedTLS(pin)
	}
	caFile := os.Getenv(EnvTLSCA)
	if caFile == "" {
		return nil, nil
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	raw, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", EnvTLSCA, err)
	}
	if !pool.AppendCertsFromPEM(raw) {
		return nil, fmt.Errorf("%s: %s holds no PEM certificate", EnvTLSCA, caFile)
	}
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, nil
}

// pinnedTLS accepts a server whose certificate is one of those in file
// (compared byte for byte), and nothing else.
func pinnedTLS(file string) (*tls.Config, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("the node's certificate: %w", err)
	}
	var pins [][]byte
	for b, rest := pem.Decode(raw); b != nil; b, rest = pem.Decode(rest) {
		if b.Type == "CERTIFICATE" {
			pins = append(pins, b.Bytes)
		}
	}
	if len(pins) == 0 {
		return nil, fmt.Errorf("the node's certificate %s holds no PEM certificate", file)
	}
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		// The chain and host checks are replaced by the pin below: the
		// URL names loopback, the certificate the node's public name.
		InsecureSkipVerify: true,
		VerifyPeerCertificate: func(rawCerts [][]byte, _ [][]*x509.Certificate) error {
			if len(rawCerts) > 0 {
				for _, p := range pins {
					if bytes.Equal(rawCerts[0], p) {
						return nil
					}
				}
			}
			return fmt.Errorf("the node's certificate is not the one in %s", file)
		},
	}, nil
}

// withTLS sets tc on the client's transport (a clone of the default one).
func withTLS(hc *http.Client, tc *tls.Config) {
	if tc == nil {
		return
	}
	if tr, ok := hc.Transport.(*http.Transport); ok {
		tr.TLSClientConfig = tc
		return
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = tc
	hc.Transport = tr
}
