package sentinel

import (
	"crypto/rand"
	"regexp"
	"strings"
	"time"

	"github.com/oklog/ulid/v2"
)

// ID prefixes minted by the daemon.
const (
	SentinelIDPrefix = "sen_"
	FollowIDPrefix   = "fol_"
)

var (
	sessionIDRe = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_-]{0,127}$`)
	mintedIDRe  = regexp.MustCompile(`^(sen|fol)_[0-9A-HJKMNP-TV-Z]{26}$`)
)

// NewSentinelID mints a new sentinel id, sen_<ULID>.
func NewSentinelID() string { return SentinelIDPrefix + newULID() }

// NewFollowID mints a new follow id, fol_<ULID>.
func NewFollowID() string { return FollowIDPrefix + newULID() }

func newULID() string {
	return ulid.MustNew(ulid.Timestamp(time.Now()), rand.Reader).String()
}

// SessionIDRule states the session id grammar for error messages and
// hints.
const SessionIDRule = "1-128 characters of [A-Za-z0-9_-], not starting with '-'"

// ValidSessionID reports whether id may be used as a session id (see
// SessionIDRule). Session ids come from harnesses and become subject tokens,
// so they are limited to [A-Za-z0-9_-]{1,128}; and they are substituted
// for {sessionId} in command hooks' argv, so a leading '-' (which a program
// would read as an option) is refused.
func ValidSessionID(id string) bool { return sessionIDRe.MatchString(id) }

// ValidSentinelID reports whether id has the shape of a minted sentinel id.
func ValidSentinelID(id string) bool {
	return strings.HasPrefix(id, SentinelIDPrefix) && mintedIDRe.MatchString(id)
}

// ValidFollowID reports whether id has the shape of a minted follow id.
func ValidFollowID(id string) bool {
	return strings.HasPrefix(id, FollowIDPrefix) && mintedIDRe.MatchString(id)
}

// ValidCursorName reports whether name may name a session's cursor: 1-32
// of [a-z0-9_-] (the Claude Code channel's is "channel").
func ValidCursorName(name string) bool {
	if len(name) < 1 || len(name) > 32 {
		return false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}
