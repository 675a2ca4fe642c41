package principals

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentproto/sentinel"
)

// Bucket is the KV bucket of the named tokens, one key per name.
const Bucket = "sentinel_principals"

// BucketConfig is the bucket's configuration (replicas: the bus's).
func BucketConfig() jetstream.KeyValueConfig {
	return jetstream.KeyValueConfig{Bucket: Bucket, Description: "named API tokens: names, scopes and SHA-256 of the secrets", History: 1}
}

// TokenPrefix starts every named token: "sntl_<name>_<64 hex>".
const TokenPrefix = "sntl_"

// secretBytes is the random part of a token.
const secretBytes = 32

// Record is one named token as the bucket keeps it.
type Record struct {
	// ID is the principal's stable id (owner of its MCP Events
	// subscriptions): a new token of a revoked one's name is another
	// principal.
	ID       string         `json:"id"`
	Name     string         `json:"name"`
	Scope    sentinel.Scope `json:"scope"`
	Sessions string         `json:"sessions,omitempty"`
	// Hash is the hex SHA-256 of the token (hashOf).
	Hash      string    `json:"hash"`
	CreatedAt time.Time `json:"createdAt"`
	CreatedBy string    `json:"createdBy,omitempty"`
}

// Principal is the record's principal.
func (r Record) Principal() sentinel.Principal {
	return sentinel.Principal{ID: "token:" + r.ID, Name: r.Name, Scope: r.Scope, Sessions: r.Sessions}
}

// hashOf is the hash the bucket keeps of a token.
func hashOf(token string) string {
	sum := sha256.Sum256([]byte("sentinel-token-v1:" + token))
	return hex.EncodeToString(sum[:])
}

// matches compares a token with the record's hash in constant time.
func (r Record) matches(token string) bool {
	return subtle.ConstantTimeCompare([]byte(hashOf(token)), []byte(r.Hash)) == 1
}

// newToken makes the token of name: the prefix, the name, and 32 random
// bytes in hex.
func newToken(name string) (string, error) {
	b := make([]byte, secretBytes)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate a token: %w", err)
	}
	return TokenPrefix + name + "_" + hex.EncodeToString(b), nil
}

// nameOf returns the name a token names (its shape checked), or false.
func nameOf(token string) (string, bool) {
	rest, ok := strings.CutPrefix(token, TokenPrefix)
	if !ok {
		return "", false
	}
	i := strings.LastIndexByte(rest, '_')
	if i <= 0 || len(rest)-i-1 != 2*secretBytes || ValidateName(rest[:i]) != nil {
		return "", false
	}
	return rest[:i], true
}

// ValidateName checks a token name: 1..63 of [a-z0-9-], starting with a
// letter or digit, not the node's own token's (sentinel.OperatorName). Errors are invalid_input.
func ValidateName(name string) error {
	if name == "" || len(name) > 63 {
		return sentinel.Errorf(sentinel.CodeInvalidInput, "a token name is 1 to 63 characters of a-z, 0-9 and -")
	}
	for i, c := range []byte(name) {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' && i > 0) {
			return sentinel.Errorf(sentinel.CodeInvalidInput, "a token name is 1 to 63 characters of a-z, 0-9 and - (not first)")
		}
	}
	if name == sentinel.OperatorName {
		return sentinel.Errorf(sentinel.CodeInvalidInput, "%q names the node's own token; choose another name", sentinel.OperatorName)
	}
	return nil
}

// Validate checks a new token's fields: a valid name, a known scope, and
// a session prefix where the scope takes one (required for agent: a
// session id prefix, or "*" for every session; optional for read; none for
// admin). Errors are invalid_input.
func Validate(name string, scope sentinel.Scope, sessions string) error {
	if err := ValidateName(name); err != nil {
		return err
	}
	if !scope.Valid() {
		return sentinel.Errorf(sentinel.CodeInvalidInput, "scope must be admin, agent or read (got %q)", clip(string(scope)))
	}
	switch {
	case scope == sentinel.ScopeAdmin && sessions != "":
		return sentinel.Errorf(sentinel.CodeInvalidInput, "an admin token acts for every session: give no sessions prefix")
	case scope == sentinel.ScopeAgent && sessions == "":
		return sentinel.Errorf(sentinel.CodeInvalidInput, "an agent token needs --sessions: the session id prefix it acts for (\"*\" for every session)")
	case sessions != "" && sessions != sentinel.AllSessions && !validPrefix(sessions):
		return sentinel.Errorf(sentinel.CodeInvalidInput, "sessions must be a session id prefix (1-128 of [A-Za-z0-9_-], not starting with -) or \"*\"")
	}
	return nil
}

// validPrefix reports whether p can start a session id.
func validPrefix(p string) bool {
	return len(p) <= 128 && sentinel.ValidSessionID(p)
}

func clip(s string) string {
	if len(s) > 32 {
		return s[:32] + "..."
	}
	return s
}
