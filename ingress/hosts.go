package ingress

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/api"
	"github.com/agentproto/sentinel/ingress/httpapi"
)

// HostPolicy decides which Host headers the node answers to. It is the
// DNS-rebinding guard: a page on evil.example that rebinds its name to
// 127.0.0.1 reaches the listener with Host: evil.example, which no rule
// below accepts.
//
// A Host is accepted when its name is
//   - loopback (localhost, 127.0.0.0/8, ::1), on any connection;
//   - listed in Allowed (a name matches any port; a name:port entry only
//     that port), on any connection;
//   - the host of the public URL (push senders such as GitHub and agentpush
//     post to it, and a tunnel on this machine may forward it unchanged);
//   - an IP literal, only on a connection that did not arrive over
//     loopback (a rebinding page always names a host, never an address,
//     and a LAN client of an --allow-remote node naturally uses the IP).
//
// Everything else is refused with 403 forbidden_host, before
// authentication and before the body is read.
type HostPolicy struct {
	// Allowed are extra host names (lowercase, optionally with :port).
	Allowed []string
	// PublicHost is the host name of the public URL ("" when unset); it
	// matches on any port.
	PublicHost string
}

// NewHostPolicy builds the policy from the allowed_hosts entries and the
// public URL (an origin such as https://sentinel.example.com).
func NewHostPolicy(allowed []string, publicURL string) (HostPolicy, error) {
	p := HostPolicy{}
	for _, h := range allowed {
		h = strings.ToLower(strings.TrimSpace(h))
		if h == "" {
			continue
		}
		if err := checkHostEntry(h); err != nil {
			return HostPolicy{}, err
		}
		p.Allowed = append(p.Allowed, h)
	}
	if publicURL != "" {
		u, err := url.Parse(publicURL)
		if err != nil || u.Host == "" {
			return HostPolicy{}, fmt.Errorf("public URL %q has no host", publicURL)
		}
		p.PublicHost = strings.ToLower(u.Hostname())
	}
	return p, nil
}

// checkHostEntry refuses an allowed_hosts entry that is not a bare host
// name or host:port (a scheme, a path or a wildcard is a mistake).
func checkHostEntry(h string) error {
	if strings.ContainsAny(h, "/*@ ") {
		return fmt.Errorf("allowed_hosts entry %q must be a host name or host:port (no scheme, path or wildcard)", h)
	}
	return nil
}

// Allows reports whether the request's Host is acceptable on the
// connection it arrived on.
func (p HostPolicy) Allows(r *http.Request) bool {
	host := strings.ToLower(r.Host)
	if host == "" {
		return false
	}
	name := hostName(host)
	if isLoopbackName(name) {
		return true
	}
	if p.PublicHost != "" && name == p.PublicHost {
		return true
	}
	for _, a := range p.Allowed {
		if a == host || a == name {
			return true
		}
	}
	if _, err := netip.ParseAddr(name); err == nil {
		return !overLoopback(r)
	}
	return false
}

// HostCheck refuses requests whose Host the policy does not accept with 403
// forbidden_host (and closes the connection, so an unread body is not
// drained).
func HostCheck(p HostPolicy) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !p.Allows(r) {
				refuse(w, sentinel.Errorf(api.CodeForbiddenHost,
					"this node does not answer to that Host header; add it to allowed_hosts (AGENTPROTO_ALLOWED_HOSTS) if it is yours"))
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// refuse answers err before the body was read and asks the server to close
// the connection instead of draining what the client still sends.
func refuse(w http.ResponseWriter, err error) {
	w.Header().Set("Connection", "close")
	httpapi.WriteError(w, err)
}

// hostName strips the port (and IPv6 brackets) from a Host header.
func hostName(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		return h
	}
	return strings.Trim(host, "[]")
}

func isLoopbackName(name string) bool {
	if name == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(name)
	return err == nil && ip.IsLoopback()
}

// overLoopback reports whether the request arrived on a loopback local
// address (unknown counts as loopback: the strict answer).
func overLoopback(r *http.Request) bool {
	la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || la == nil {
		return true
	}
	ap, err := netip.ParseAddrPort(la.String())
	return err != nil || ap.Addr().Unmap().IsLoopback()
}
