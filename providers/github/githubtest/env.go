package githubtest

import (
	"crypto/tls"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// strippedPrefixes and strippedVars are removed from the inherited
// environment before the fake's settings are added.
var (
	strippedPrefixes = []string{"GH_", "GITHUB_", "SSL_CERT_"}
	strippedVars     = map[string]bool{"REQUEST_METHOD": true, "PAGER": true, "BROWSER": true,
		"CODESPACES": true, "XDG_CONFIG_HOME": true, "XDG_STATE_HOME": true, "XDG_DATA_HOME": true, "XDG_CACHE_HOME": true}
)

// Env returns the exact, isolated environment for a real gh talking to this
// fake: the inherited environment minus GH_*, GITHUB_*, proxy, SSL_CERT_*,
// REQUEST_METHOD, PAGER, BROWSER, CODESPACES and XDG_* variables, plus a
// fresh GH_CONFIG_DIR and XDG dirs under t.TempDir, quiet non-interactive
// settings, both proxy spellings pointing at the fake, NO_PROXY and
// no_proxy empty, SSL_CERT_FILE the fake's CA, and GH_TOKEN=token (none
// when token is "", which is a logged-out gh).
func (s *Server) Env(token string) []string {
	dir := s.t.TempDir()
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strippedVars[k] || strings.HasSuffix(strings.ToUpper(k), "_PROXY") || hasAnyPrefix(k, strippedPrefixes) {
			continue
		}
		env = append(env, kv)
	}
	env = append(env,
		"GH_CONFIG_DIR="+filepath.Join(dir, "ghconfig"),
		"XDG_CONFIG_HOME="+filepath.Join(dir, "xdg", "config"),
		"XDG_STATE_HOME="+filepath.Join(dir, "xdg", "state"),
		"XDG_DATA_HOME="+filepath.Join(dir, "xdg", "data"),
		"XDG_CACHE_HOME="+filepath.Join(dir, "xdg", "cache"),
		"GH_PROMPT_DISABLED=1", "GH_NO_UPDATE_NOTIFIER=1", "GH_PAGER=cat", "NO_COLOR=1",
		"GH_SPINNER_DISABLED=1", "CLICOLOR=0",
		"NO_PROXY=", "no_proxy=",
		"HTTPS_PROXY="+s.proxyURL, "https_proxy="+s.proxyURL,
		"HTTP_PROXY="+s.proxyURL, "http_proxy="+s.proxyURL,
		"SSL_CERT_FILE="+s.caFile,
	)
	if token != "" {
		env = append(env, "GH_TOKEN="+token)
	}
	return env
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// HTTPClient returns a client for the in-process REST client: it proxies
// through the fake and trusts only the fake's CA, so requests to
// https://api.github.com reach the fake. It is shared and closed at
// cleanup.
func (s *Server) HTTPClient() *http.Client {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.client == nil {
		proxy, _ := url.Parse(s.proxyURL)
		s.client = &http.Client{
			Timeout: 10 * time.Second,
			Transport: &http.Transport{
				Proxy:               http.ProxyURL(proxy),
				TLSClientConfig:     &tls.Config{RootCAs: s.certs.pool, MinVersion: tls.VersionTLS12},
				MaxIdleConnsPerHost: 8,
				IdleConnTimeout:     30 * time.Second,
			},
		}
	}
	return s.client
}

// ProxyURL returns the fake's proxy URL (http://127.0.0.1:PORT).
func (s *Server) ProxyURL() string { return s.proxyURL }

// CAFile returns the path of the fake's CA certificate (PEM).
func (s *Server) CAFile() string { return s.caFile }
