package sentinel

import (
	"net/url"
	"strings"
)

// Redacted is the marker that stands in for a removed secret.
const Redacted = "[redacted]"

// RedactURL returns raw fit for logs, errors and views: scheme://host/path
// with any userinfo, query and fragment replaced by the Redacted marker
// (https://[redacted]@host/path?[redacted]). A string that is not an
// absolute URL with a host comes back as the marker alone. The path is
// kept: a URL whose path itself is a secret is not protected.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" || u.Opaque != "" {
		return Redacted
	}
	var b strings.Builder
	b.WriteString(u.Scheme + "://")
	if u.User != nil {
		b.WriteString(Redacted + "@")
	}
	b.WriteString(u.Host)
	b.WriteString(u.EscapedPath())
	if u.RawQuery != "" || u.ForceQuery {
		b.WriteString("?" + Redacted)
	}
	if u.Fragment != "" {
		b.WriteString("#" + Redacted)
	}
	return b.String()
}
