package github

import (
	"regexp"
	"strings"
)

// tokenRe matches the shapes of GitHub tokens (classic, OAuth, user,
// server, refresh and fine-grained).
var tokenRe = regexp.MustCompile(`\b(gh[pousr]_[A-Za-z0-9]{16,}|github_pat_[A-Za-z0-9_]{16,})\b`)

// tokenVars are the environment variables gh reads a token from.
var tokenVars = []string{"GH_TOKEN", "GITHUB_TOKEN", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN"}

// Redacted replaces a secret in messages.
const Redacted = "[REDACTED]"

// redact removes token-shaped strings and the values of the token
// variables of env from s.
func redact(s string, env []string) string {
	for _, k := range tokenVars {
		if v := lookupEnv(env, k); len(v) >= 4 {
			s = strings.ReplaceAll(s, v, Redacted)
		}
	}
	return tokenRe.ReplaceAllString(s, Redacted)
}

// RedactToken removes tok (when non-empty) and any token-shaped string from
// s. Use it before wrapping text that may echo a credential.
func RedactToken(s, tok string) string {
	if len(tok) >= 4 {
		s = strings.ReplaceAll(s, tok, Redacted)
	}
	return tokenRe.ReplaceAllString(s, Redacted)
}
