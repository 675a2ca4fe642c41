package bus

import (
	"net/url"
	"strings"

	"github.com/agentproto/sentinel"
)

// redactURLs lists server URLs for a message, each without its userinfo
// or query (sentinel.RedactURL): nats.url may carry a user and password
// or a token (nats://user:pass@host, nats://token@host).
func redactURLs(urls []string) string {
	out := make([]string, len(urls))
	for i, u := range urls {
		out[i] = sentinel.RedactURL(u)
	}
	return strings.Join(out, ",")
}

// urlSecrets returns the userinfo parts of the URLs (raw and decoded), so
// an error that quotes a URL (a parse error does) can be scrubbed of them.
func urlSecrets(urls []string) []string {
	var out []string
	for _, raw := range urls {
		_, rest, ok := strings.Cut(raw, "://")
		if !ok {
			rest = raw
		}
		if i := strings.IndexAny(rest, "/?#"); i >= 0 {
			rest = rest[:i]
		}
		at := strings.LastIndex(rest, "@")
		if at < 0 {
			continue
		}
		for _, part := range strings.SplitN(rest[:at], ":", 2) {
			if part == "" {
				continue
			}
			out = append(out, part)
			if dec, err := url.PathUnescape(part); err == nil && dec != part {
				out = append(out, dec)
			}
		}
	}
	return out
}

// scrubbedError is an error whose message has the URLs' secrets replaced
// by the redaction marker; errors.Is and errors.As still see the original.
type scrubbedError struct {
	msg string
	err error
}

func (e *scrubbedError) Error() string { return e.msg }
func (e *scrubbedError) Unwrap() error { return e.err }

// scrub returns err with every userinfo part of urls taken out of its
// message (err itself when none appears).
func scrub(err error, urls []string) error {
	msg := err.Error()
	changed := false
	for _, s := range urlSecrets(urls) {
		if strings.Contains(msg, s) {
			msg, changed = strings.ReplaceAll(msg, s, sentinel.Redacted), true
		}
	}
	if !changed {
		return err
	}
	return &scrubbedError{msg: msg, err: err}
}
