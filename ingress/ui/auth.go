package ui

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// CookieName is the dashboard's session cookie.
const CookieName = "sentinel_ui"

// SecureCookieName is the session cookie over TLS.
const SecureCookieName = "__Host-sentinel_ui"

// cookieVersion prefixes every signed payload, so a format change
// invalidates old cookies instead of misreading them (v2: the port).
const cookieVersion = "v2"

// Errors of a session cookie that does not authenticate.
var (
	errNoCookie      = errors.New("no session cookie")
	errBadCookie     = errors.New("malformed session cookie")
	errBadSignature  = errors.New("session cookie signature does not verify")
	errExpiredCookie = errors.New("session expired")
	errRevoked       = errors.New("session signed out")
	errOtherPort     = errors.New("session cookie of another port (sign in on this one)")
)

// session is a verified dashboard session.
type session struct {
	// nonce is the session's random id (hex): what a sign-out revokes and
	// what the CSRF token is bound to.
	nonce   string
	expires time.Time
}

// signer mints and verifies session cookies. A cookie is
// base64url("v2|<expiry unix>|<nonce>|<port>") "." base64url(HMAC-SHA256),
// with
// a key derived from the node's API token: every node of a cluster (one
// token) accepts it, rotating the token invalidates every session, and the
// token itself never leaves the node. The port is the port of the listener
// that minted it: browsers send a host's cookies to every port of it, and
// a listener on another port (another node of one machine, or any server
// on another port of the host that relays it) is refused. A sign-out
// revokes the nonce on this node until the cookie would have expired.
type signer struct {
	key []byte
	ttl time.Duration
	now func() time.Time

	mu      sync.Mutex
	revoked map[string]time.Time
}

// maxRevoked bounds the revocation list; past it the entries closest to
// their expiry are not kept longer than needed (expired ones are pruned
// first).
const maxRevoked = 10000

func newSigner(token string, ttl time.Duration, now func() time.Time) *signer {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte("sentinel-ui-cookie-v1"))
	return &signer{key: m.Sum(nil), ttl: ttl, now: now, revoked: map[string]time.Time{}}
}

// mac is the HMAC of msg under the signer's key.
func (s *signer) mac(msg string) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(msg))
	return m.Sum(nil)
}

// mint returns a fresh session and its cookie value, bound to port.
func (s *signer) mint(port string) (session, string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return session{}, "", fmt.Errorf("session nonce: %w", err)
	}
	sess := session{nonce: hex.EncodeToString(b[:]), expires: s.now().Add(s.ttl)}
	payload := cookieVersion + "|" + strconv.FormatInt(sess.expires.Unix(), 10) + "|" + sess.nonce + "|" + port
	enc := base64.RawURLEncoding
	return sess, enc.EncodeToString([]byte(payload)) + "." + enc.EncodeToString(s.mac(payload)), nil
}

// verify checks a cookie value: its signature (constant time), the port
// it is bound to, its expiry and that it was not signed out.
func (s *signer) verify(value, port string) (session, error) {
	if value == "" {
		return session{}, errNoCookie
	}
	if len(value) > 512 {
		return session{}, errBadCookie
	}
	p64, m64, ok := strings.Cut(value, ".")
	if !ok {
		return session{}, errBadCookie
	}
	enc := base64.RawURLEncoding
	payload, err1 := enc.DecodeString(p64)
	mac, err2 := enc.DecodeString(m64)
	if err1 != nil || err2 != nil {
		return session{}, errBadCookie
	}
	if !hmac.Equal(mac, s.mac(string(payload))) {
		return session{}, errBadSignature
	}
	parts := strings.Split(string(payload), "|")
	if len(parts) != 4 || parts[0] != cookieVersion || len(parts[2]) != 32 {
		return session{}, errBadCookie
	}
	if parts[3] != port {
		return session{}, errOtherPort
	}
	exp, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil {
		return session{}, errBadCookie
	}
	sess := session{nonce: parts[2], expires: time.Unix(exp, 0)}
	if !s.now().Before(sess.expires) {
		return session{}, errExpiredCookie
	}
	s.mu.Lock()
	_, gone := s.revoked[sess.nonce]
	s.mu.Unlock()
	if gone {
		return session{}, errRevoked
	}
	return sess, nil
}

// live reports whether a verified session is still good now: not expired
// and not signed out since (open streams ask on every refresh).
func (s *signer) live(sess session) bool {
	if !s.now().Before(sess.expires) {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, gone := s.revoked[sess.nonce]
	return !gone
}

// revoke signs a session out on this node.
func (s *signer) revoke(sess session) {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.revoked) >= maxRevoked {
		for n, exp := range s.revoked {
			if !now.Before(exp) {
				delete(s.revoked, n)
			}
		}
	}
	if len(s.revoked) < maxRevoked {
		s.revoked[sess.nonce] = sess.expires
	}
}

// csrf is the CSRF token of a session: an HMAC of its nonce, so a token
// is worthless with any other session cookie.
func (s *signer) csrf(sess session) string {
	return base64.RawURLEncoding.EncodeToString(s.mac("csrf|" + sess.nonce))
}

// checkCSRF compares a submitted token with the session's in constant
// time.
func (s *signer) checkCSRF(sess session, got string) bool {
	want := s.csrf(sess)
	return len(got) == len(want) && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// tokenMatches compares a submitted API token with the node's in constant
// time (an empty node token never matches).
func tokenMatches(want, got string) bool {
	return want != "" && subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(want)) == 1
}

// cookieName is the session cookie of a request: SecureCookieName over
// TLS, CookieName over plain HTTP.
func cookieName(r *http.Request) string {
	if r.TLS != nil {
		return SecureCookieName
	}
	return CookieName
}

// cookiePath is where the cookie applies: "/" over TLS (the __Host-
// prefix requires it), /ui over plain HTTP.
func cookiePath(r *http.Request) string {
	if r.TLS != nil {
		return "/"
	}
	return "/ui"
}

// listenerPort is the port of the listener a request came in on ("" for
// a request served without one, in-process).
func listenerPort(r *http.Request) string {
	addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || addr == nil {
		return ""
	}
	_, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return ""
	}
	return port
}

// setCookie sets the session cookie: HttpOnly, SameSite=Strict; over TLS
// __Host-sentinel_ui (Secure, Path=/, no Domain), else sentinel_ui with
// Path=/ui.
func setCookie(w http.ResponseWriter, r *http.Request, value string, ttl time.Duration) {
	http.SetCookie(w, &http.Cookie{
		Name: cookieName(r), Value: value, Path: cookiePath(r), MaxAge: int(ttl / time.Second),
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil,
	})
}

// clearCookie deletes the session cookie.
func clearCookie(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{
		Name: cookieName(r), Value: "", Path: cookiePath(r), MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil,
	})
}
