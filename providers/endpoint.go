package providers

import (
	"fmt"
	"net"
	"net/url"
	"strings"
)

// IsLoopbackHost reports whether host (a URL's hostname, without port or
// brackets) is "localhost" or a loopback IP address (127.0.0.0/8, ::1).
func IsLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// CheckSecureURL reports whether raw may receive a credential: an absolute
// https URL, or http to a loopback host (a local fake or proxy), with a host
// and no user info. The error says what is wrong and never repeats the URL's
// query or user info.
func CheckSecureURL(raw string) error {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return fmt.Errorf("the URL does not parse")
	}
	switch {
	case u.User != nil:
		return fmt.Errorf("the URL must not carry credentials")
	case u.Host == "" || u.Hostname() == "":
		return fmt.Errorf("the URL must be absolute (https://host)")
	case u.Scheme == "https":
		return nil
	case u.Scheme == "http" && IsLoopbackHost(u.Hostname()):
		return nil
	case u.Scheme == "http":
		return fmt.Errorf("the URL %s://%s is plain http: use https (http is allowed only to a loopback host)", u.Scheme, u.Host)
	}
	return fmt.Errorf("the URL scheme must be https")
}
