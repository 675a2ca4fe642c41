package subscriptions

import (
	"fmt"
	"net/url"
	"path"
	"strings"
)

// allowEntry is one parsed mcp_events.callback_allowlist entry.
type allowEntry struct {
	scheme, host, port, path string
}

// parseAllowEntry parses an allowlist entry: an absolute http(s) URL with
// a host, an optional port and path, and no userinfo, query or fragment.
func parseAllowEntry(raw string) (allowEntry, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Hostname() == "" {
		return allowEntry{}, fmt.Errorf("mcp_events.callback_allowlist entry %q must be an absolute http(s) URL (https://host[:port][/path])", clipEntry(raw))
	}
	if u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return allowEntry{}, fmt.Errorf("mcp_events.callback_allowlist entry %q must not carry userinfo, a query or a fragment", clipEntry(u.Redacted()))
	}
	return allowEntry{scheme: u.Scheme, host: strings.ToLower(u.Hostname()), port: effectivePort(u), path: cleanPath(u.EscapedPath())}, nil
}

// matches reports whether u is under the entry: the same scheme, host
// and port (a default port spelled out or not), and a path that is the
// entry's or below it at a "/" boundary (after dot segments are resolved;
// an encoded slash is not a boundary).
func (e allowEntry) matches(u *url.URL) bool {
	if u.Scheme != e.scheme || strings.ToLower(u.Hostname()) != e.host || effectivePort(u) != e.port {
		return false
	}
	if e.path == "/" {
		return true
	}
	p := cleanPath(u.EscapedPath())
	return p == e.path || strings.HasPrefix(p, e.path+"/")
}

// allowlisted reports whether the callback URL raw is under an entry of
// list. Entries are checked at start (Config.Validate); one that does not
// parse matches nothing.
func allowlisted(list []string, raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return false
	}
	for _, s := range list {
		if s == "" {
			continue
		}
		if e, err := parseAllowEntry(s); err == nil && e.matches(u) {
			return true
		}
	}
	return false
}

// effectivePort is u's port, or its scheme's default.
func effectivePort(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if u.Scheme == "http" {
		return "80"
	}
	return "443"
}

// cleanPath resolves dot segments and drops a trailing slash ("" is "/").
func cleanPath(p string) string {
	if p == "" {
		return "/"
	}
	return path.Clean("/" + p)
}

func clipEntry(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}
