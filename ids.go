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
	sessionIDRe = regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`)
	mintedIDRe  = regexp.MustCompile(`^(sen|fol)_[0-9A-HJKMNP-TV-Z]{26}$`)
)

// NewSentinelID mints a new sentinel id, sen_<ULID>.
func NewSentinelID() string { return SentinelIDPrefix + newULID() }

// NewFollowID mints a new follow id, fol_<ULID>.
func NewFollowID() string { return FollowIDPrefix + newULID() }

func newULID() string {
	return ulid.MustNew(ulid.Timestamp(time.Now()), rand.Reader).String()
}

// ValidSessionID reports whether id may be used as a session id. Session ids
// come from harnesses and become subject tokens, so they are limited to
// [A-Za-z0-9_-]{1,128}.
func ValidSessionID(id string) bool { return sessionIDRe.MatchString(id) }

// ValidSentinelID reports whether id has the shape of a minted sentinel id.
func ValidSentinelID(id string) bool {
	return strings.HasPrefix(id, SentinelIDPrefix) && mintedIDRe.MatchString(id)
}

// ValidFollowID reports whether id has the shape of a minted follow id.
func ValidFollowID(id string) bool {
	return strings.HasPrefix(id, FollowIDPrefix) && mintedIDRe.MatchString(id)
}
