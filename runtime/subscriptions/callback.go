package subscriptions

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agentproto/sentinel"
)

// checkCallback validates a callback URL: https (http too with
// allowPrivate), a host, no userinfo or fragment. Errors are
// invalid_callback.
func checkCallback(raw string, allowPrivate bool) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Hostname() == "" {
		return nil, sentinel.Errorf(sentinel.CodeInvalidCallback, "delivery.url must be an absolute https URL")
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && allowPrivate:
	default:
		return nil, sentinel.Errorf(sentinel.CodeInvalidCallback, "delivery.url must use https")
	}
	if u.User != nil || u.Fragment != "" {
		return nil, sentinel.Errorf(sentinel.CodeInvalidCallback, "delivery.url must not carry userinfo or a fragment")
	}
	if len(raw) > 2048 {
		return nil, sentinel.Errorf(sentinel.CodeInvalidCallback, "delivery.url is longer than 2048 bytes")
	}
	return u, nil
}

// checkSecret validates a Standard Webhooks secret: whsec_ and the base64
// of 24..64 bytes. Errors are invalid_callback (never echoing the value).
func checkSecret(s string) ([]byte, error) {
	b64, ok := strings.CutPrefix(s, "whsec_")
	if ok {
		if key, err := base64.StdEncoding.DecodeString(b64); err == nil && len(key) >= 24 && len(key) <= 64 {
			return key, nil
		}
	}
	return nil, sentinel.Errorf(sentinel.CodeInvalidCallback, "delivery.secret must be whsec_ followed by the base64 of 24 to 64 random bytes")
}

// publicAddr reports whether an address is globally routable. An IPv4
// address (or an IPv4-mapped IPv6 one) must be global unicast outside the
// special ranges (loopback, private, link-local, CGNAT, documentation,
// benchmarking, the 6to4 relay, reserved). An IPv6 address must be in the
// global unicast block 2000::/3 and outside its special ranges (the IETF
// protocol block with Teredo, documentation, 6to4, which embeds any IPv4
// address): everything else, the IPv4-compatible (::a.b.c.d),
// IPv4-translated (::ffff:0:a.b.c.d), NAT64 (64:ff9b::/96, 64:ff9b:1::/48),
// site-local (fec0::/10), unique local and discard-only ranges included,
// is refused without having to be listed.
func publicAddr(a netip.Addr) bool {
	a = a.Unmap()
	if !a.IsGlobalUnicast() || a.IsPrivate() || a.IsLoopback() || a.IsLinkLocalUnicast() {
		return false
	}
	if a.Is6() && !globalUnicast6.Contains(a) {
		return false
	}
	for _, p := range blockedPrefixes {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

// globalUnicast6 is the IPv6 block IANA allocates global unicast from.
var globalUnicast6 = netip.MustParsePrefix("2000::/3")

// blockedPrefixes are the special ranges inside the global unicast space
// (and, as a second guard, the IPv6 forms that embed an IPv4 address).
var blockedPrefixes = func() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range []string{
		// IPv4.
		"0.0.0.0/8", "100.64.0.0/10", "192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "198.18.0.0/15",
		"198.51.100.0/24", "203.0.113.0/24", "240.0.0.0/4",
		// IPv6 inside 2000::/3: IETF protocol assignments (Teredo among
		// them), documentation, 6to4, documentation (RFC 9637).
		"2001::/23", "2001:db8::/32", "2002::/16", "3fff::/20",
		// IPv6 outside 2000::/3, listed for the reader: IPv4-compatible,
		// IPv4-translated, NAT64 (well-known and local-use), discard-only,
		// site-local, unique local.
		"::/96", "::ffff:0:0:0/96", "64:ff9b::/96", "64:ff9b:1::/48", "100::/64", "fec0::/10", "fc00::/7"} {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}()

// errBlocked is a callback resolving to a refused address.
var errBlocked = errors.New("the callback resolves to an address that is not globally routable")

// newCallbackClient is the SSRF-hardened client of deliveries and
// verification POSTs: the host is resolved at every connection and each
// address checked before it is dialled (the dial goes to the checked
// address, the URL's host stays in Host and SNI), redirects are never
// followed, and every request is bounded by timeout.
func newCallbackClient(timeout time.Duration, allowPrivate bool) *http.Client {
	dialer := &net.Dialer{Timeout: timeout}
	tr := &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			host, port, err := net.SplitHostPort(addr)
			if err != nil {
				return nil, err
			}
			ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
			if err != nil {
				return nil, err
			}
			var lastErr error = errBlocked
			for _, ip := range ips {
				if !allowPrivate && !publicAddr(ip) {
					continue
				}
				c, err := dialer.DialContext(ctx, network, net.JoinHostPort(ip.Unmap().String(), port))
				if err == nil {
					return c, nil
				}
				lastErr = err
			}
			return nil, lastErr
		},
		TLSClientConfig:       &tls.Config{MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:   timeout,
		ResponseHeaderTimeout: timeout,
		MaxIdleConnsPerHost:   2,
		IdleConnTimeout:       30 * time.Second,
	}
	return &http.Client{Transport: tr, Timeout: timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// signature is the Standard Webhooks webhook-signature of body under each
// secret (space-separated v1, signatures).
func signature(secrets []string, msgID string, ts int64, body []byte) string {
	var sigs []string
	for _, s := range secrets {
		key, err := checkSecret(s)
		if err != nil {
			continue
		}
		m := hmac.New(sha256.New, key)
		m.Write([]byte(msgID + "." + strconv.FormatInt(ts, 10) + "."))
		m.Write(body)
		sigs = append(sigs, "v1,"+base64.StdEncoding.EncodeToString(m.Sum(nil)))
	}
	return strings.Join(sigs, " ")
}

// postResult is what one POST came to: the status (0 when none) and the
// lastError category of a failure ("" on 2xx).
type postResult struct {
	Status   int
	Category string
	Body     []byte
}

// post sends one signed delivery (freshly timestamped) and reads at most
// 64 KiB of the answer.
func post(ctx context.Context, client *http.Client, target, subID, msgID string, secrets []string, body []byte, now time.Time) postResult {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return postResult{Category: "connection_refused"}
	}
	ts := now.Unix()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("webhook-id", msgID)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
	req.Header.Set("webhook-signature", signature(secrets, msgID, ts, body))
	req.Header.Set("X-MCP-Subscription-Id", subID)
	resp, err := client.Do(req)
	if err != nil {
		return postResult{Category: category(err)}
	}
	defer resp.Body.Close()
	rb, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	r := postResult{Status: resp.StatusCode, Body: rb}
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
	case resp.StatusCode >= 500:
		r.Category = "http_5xx"
	default:
		r.Category = "http_4xx"
	}
	return r
}

// category maps a transport failure to a lastError category (never the
// endpoint's own words).
func category(err error) string {
	var ne net.Error
	var cve *tls.CertificateVerificationError
	var rhe tls.RecordHeaderError
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		return "timeout"
	case errors.As(err, &cve) || errors.As(err, &rhe) || strings.Contains(err.Error(), "tls:") || strings.Contains(err.Error(), "x509:"):
		return "tls_error"
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, errBlocked):
		return "connection_refused"
	}
	return "connection_refused"
}

// nonce returns a random challenge or control message id suffix.
func nonce() string {
	b := make([]byte, 18)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// controlID is the webhook-id of a control envelope.
func controlID(typ string) string { return fmt.Sprintf("msg_%s_%s", typ, nonce()) }
