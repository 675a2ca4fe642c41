package sentinels

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/agentproto/sentinel"
)

// NormalizeOrigin turns a configured public URL into an origin
// (scheme://host[:port], no trailing slash). It must be http or https with
// no credentials, query, fragment or path other than "/".
func NormalizeOrigin(raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "", nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", sentinel.Errorf(sentinel.CodeInvalidInput, "public URL %q does not parse", raw)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return "", sentinel.Errorf(sentinel.CodeInvalidInput, "public URL %q must be http or https", raw)
	case u.Host == "":
		return "", sentinel.Errorf(sentinel.CodeInvalidInput, "public URL %q has no host", raw)
	case u.User != nil:
		return "", sentinel.Errorf(sentinel.CodeInvalidInput, "public URL must not carry credentials")
	case u.RawQuery != "" || u.ForceQuery:
		return "", sentinel.Errorf(sentinel.CodeInvalidInput, "public URL %q must not have a query", raw)
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return "", sentinel.Errorf(sentinel.CodeInvalidInput, "public URL %q must not have a fragment", raw)
	case u.Path != "" && u.Path != "/":
		return "", sentinel.Errorf(sentinel.CodeInvalidInput, "public URL %q must be an origin (no path)", raw)
	}
	return fmt.Sprintf("%s://%s", u.Scheme, strings.ToLower(u.Host)), nil
}
