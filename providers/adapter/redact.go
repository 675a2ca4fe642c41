package adapter

import (
	"regexp"
	"strings"
	"sync"

	"github.com/agentproto/sentinel"
)

// tokenRe matches token-shaped strings: GitHub's (classic, OAuth, user,
// server, refresh, fine-grained), GitLab's personal, project and group
// access tokens, and a bearer credential in a header echo.
var tokenRe = regexp.MustCompile(`\b(gh[pousr]_[A-Za-z0-9]{16,}|github_pat_[A-Za-z0-9_]{16,}|gl(pat|dt|ptt|oas|rt)-[A-Za-z0-9_-]{16,})\b|(?i)(bearer|token)\s+[A-Za-z0-9._~+/=-]{12,}`)

// urlUserRe and urlQueryRe match the userinfo and the query of a URL in
// free text.
var (
	urlUserRe  = regexp.MustCompile(`(https?://)[^/\s@]+@`)
	urlQueryRe = regexp.MustCompile(`(https?://[^\s?#]+)\?[^\s#]*`)
)

// redactor removes an adapter's known secrets (the sensitive values of
// its stored setup, the secret-looking variables of its environment) and
// token- or credential-shaped text from everything the adapter writes
// before it reaches a log, an error or a view. It is safe for concurrent
// use.
type redactor struct {
	mu      sync.RWMutex
	secrets []string
}

// learn adds values to the known secrets (values shorter than 4 bytes are
// ignored: they would mangle every message).
func (r *redactor) learn(values ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, v := range values {
		if len(v) < 4 {
			continue
		}
		dup := false
		for _, s := range r.secrets {
			if s == v {
				dup = true
				break
			}
		}
		if !dup {
			r.secrets = append(r.secrets, v)
		}
	}
}

// redact returns s without the known secrets and credential shapes.
func (r *redactor) redact(s string) string {
	r.mu.RLock()
	for _, v := range r.secrets {
		s = strings.ReplaceAll(s, v, sentinel.Redacted)
	}
	r.mu.RUnlock()
	s = tokenRe.ReplaceAllString(s, sentinel.Redacted)
	s = urlUserRe.ReplaceAllString(s, "${1}"+sentinel.Redacted+"@")
	return urlQueryRe.ReplaceAllString(s, "${1}?"+sentinel.Redacted)
}

// oneLine makes adapter text fit one log or error line: control
// characters (and the Unicode line separators) become spaces and it is
// clipped to limit runes.
func oneLine(s string, limit int) string {
	var b strings.Builder
	n := 0
	for _, c := range s {
		if n == limit {
			b.WriteString("…")
			break
		}
		if c < 0x20 || (c >= 0x7f && c < 0xa0) || c == '\u2028' || c == '\u2029' {
			c = ' '
		}
		b.WriteRune(c)
		n++
	}
	return b.String()
}
