package localgh

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// cursorVersion is written into every cursor.
const cursorVersion = 1

// Bounds of a repository cursor, which lives in the sentinel's record (a
// JetStream KV value: at most 1 MiB with the rest of the record). Open PRs
// are never evicted for closed ones:
//   - the PRs of the last pulls list (at most repoListSize) keep their full
//     state;
//   - closed PRs whose closure was reported keep a compact state, at most
//     maxClosedPRs of them (the lowest numbers are evicted first and
//     EvictedMax remembers how far: such a PR coming back closed is history,
//     not news);
//   - open PRs that left the list are dormant: about 70 bytes each, enough
//     to report their closure, readiness, new reviews and CI when they come
//     back. At most maxDormantPRs (about 210 KB); past that the least
//     recently updated are forgotten, and one of those later closing is
//     taken for a PR that predates the watch (no event). GitHub's busiest
//     repositories have a few thousand open PRs.
const (
	maxClosedPRs  = 200
	maxDormantPRs = 3000
)

// health is the failure state every cursor carries.
type health struct {
	Failures      int    `json:"consecutiveFailures"`
	LastError     string `json:"lastError,omitempty"`
	NextRetryAtMs int64  `json:"nextRetryAtMs,omitempty"`
}

// check is one check's state: C the conclusion ("" while running), R the
// check run id (so a re-run that lands on the same conclusion is seen), J
// whether it is a GitHub Actions job (R is then the job id), F whether the
// head repository (a fork) reported it.
type check struct {
	C string `json:"c"`
	R int64  `json:"r,omitempty"`
	J bool   `json:"j,omitempty"`
	F bool   `json:"f,omitempty"`
}

// snapshot is what one poll knows of a PR.
type snapshot struct {
	State string `json:"state"` // open, closed or merged
	Head  string `json:"headSha,omitempty"`
	// HeadRepo is the head's repository when it is a fork ("" otherwise).
	HeadRepo string `json:"headRepo,omitempty"`
	ClosedAt string `json:"closedAt,omitempty"` // GitHub's merged_at or closed_at
	MergedBy string `json:"mergedBy,omitempty"`
	Draft    bool   `json:"draft,omitempty"`
	Author   string `json:"author,omitempty"`
	Assoc    string `json:"authorAssociation,omitempty"`
	Title    string `json:"title,omitempty"`
	URL      string `json:"url,omitempty"`
	// Updated is GitHub's updated_at (repo scope: refetch reviews on change).
	Updated string `json:"updatedAt,omitempty"`
	// Reviews are the ids of the submitted reviews already seen.
	Reviews []int64 `json:"reviews,omitempty"`
	// ReviewsAbove: reviews with an id at or below it were seen (a PR back
	// from dormancy; GitHub's review ids only grow).
	ReviewsAbove int64 `json:"reviewsAbove,omitempty"`
	// ReviewsFrom: reviews submitted before it are history (repo scope).
	ReviewsFrom string `json:"reviewsFrom,omitempty"`
	// Checks maps check name (or status context) to its state.
	Checks map[string]check `json:"checks,omitempty"`
}

// comments is the comment-poll position: From is the baseline (comments
// created before it are history), Since the `since` query value, MaxID the
// highest comment id seen.
type comments struct {
	From  string `json:"from"`
	Since string `json:"since"`
	MaxID int64  `json:"maxId,omitempty"`
}

// prCursor is the PR-scope cursor.
type prCursor struct {
	V             int       `json:"v"`
	Snapshot      *snapshot `json:"snapshot,omitempty"`
	ClosedEmitted bool      `json:"closedEmitted,omitempty"`
	Comments      *comments `json:"comments,omitempty"`
	// Sig is the ETags of the last poll's responses; an equal set means
	// nothing changed and the poll ends without decoding.
	Sig string `json:"sig,omitempty"`
	health
}

// repoPR is one PR known to a repository cursor.
type repoPR struct {
	Snap          snapshot `json:"snapshot"`
	ClosedEmitted bool     `json:"closedEmitted,omitempty"`
	CIReported    string   `json:"ciReported,omitempty"` // "<headSha>:<verdict>"
	// InList: the PR was in the last pulls list decoded; only those have
	// their CI watched (the list bounds the work per tick).
	InList bool `json:"inList,omitempty"`
}

// dormant is an open PR that left the pulls list, in compact form: what
// diffing it against its next listing needs.
type dormant struct {
	// Updated is its updated_at (unix seconds) when last listed.
	Updated int64 `json:"u"`
	Draft   bool  `json:"d,omitempty"`
	// ReviewsAbove is the highest review id seen; ReviewsFrom (unix
	// seconds) the time before which reviews are history.
	ReviewsAbove int64 `json:"r,omitempty"`
	ReviewsFrom  int64 `json:"f,omitempty"`
	// CI is the CI verdict reported: "<head sha prefix>:<verdict>".
	CI string `json:"c,omitempty"`
}

// dormantHead is how much of the head sha a dormant PR keeps.
const dormantHead = 12

// repoCursor is the repository-scope cursor.
type repoCursor struct {
	V           int                `json:"v"`
	PRs         map[string]*repoPR `json:"prs,omitempty"`
	Dormant     map[string]dormant `json:"dormant,omitempty"`
	BaselinedAt string             `json:"baselinedAt,omitempty"`
	// EvictedMax is the highest PR number evicted from PRs (closed, its
	// closure reported).
	EvictedMax int `json:"evictedMax,omitempty"`
	// ListETag is the ETag of the last pulls list decoded.
	ListETag string `json:"listEtag,omitempty"`
	health
}

// parsePRCursor decodes a PR cursor tolerantly: anything unparseable is a
// fresh baseline.
func parsePRCursor(s string) prCursor {
	var c prCursor
	if s == "" || json.Unmarshal([]byte(s), &c) != nil {
		return prCursor{V: cursorVersion}
	}
	if c.Snapshot != nil && !validState(c.Snapshot.State) {
		c.Snapshot = nil
	}
	c.health = c.health.sane()
	c.V = cursorVersion
	return c
}

// parseRepoCursor decodes a repository cursor tolerantly.
func parseRepoCursor(s string) repoCursor {
	var c repoCursor
	if s == "" || json.Unmarshal([]byte(s), &c) != nil {
		return repoCursor{V: cursorVersion}
	}
	for k, pr := range c.PRs {
		if !validNumber(k) || pr == nil || !validState(pr.Snap.State) {
			delete(c.PRs, k)
		}
	}
	for k := range c.Dormant {
		if _, known := c.PRs[k]; known || !validNumber(k) {
			delete(c.Dormant, k)
		}
	}
	if len(c.Dormant) == 0 {
		c.Dormant = nil
	}
	c.EvictedMax = max(c.EvictedMax, 0)
	c.health = c.health.sane()
	c.V = cursorVersion
	return c
}

// validNumber reports whether k is a PR number in canonical form.
func validNumber(k string) bool {
	n, err := strconv.Atoi(k)
	return err == nil && n >= 1 && strconv.Itoa(n) == k
}

func validState(s string) bool { return s == stateOpen || s == stateClosed || s == stateMerged }

// sane clamps values a hand-edited or corrupt cursor could carry.
func (h health) sane() health {
	if h.Failures < 0 {
		h.Failures = 0
	}
	if h.Failures > 64 {
		h.Failures = 64
	}
	h.LastError = truncUTF8(h.LastError, 500)
	return h
}

func encode(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

// fail records a failed poll: backoff BackoffBase * 2^(failures-1) capped
// at BackoffMax, at least retryAfter.
func (h *health) fail(now time.Time, msg string, retryAfter time.Duration) {
	h.Failures++
	wait := BackoffBase << min(h.Failures-1, 10)
	wait = min(wait, BackoffMax)
	wait = max(wait, retryAfter)
	h.NextRetryAtMs = now.Add(wait).UnixMilli()
	h.LastError = truncUTF8(msg, 500)
}

// backingOff reports whether polling must be skipped at now.
func (h health) backingOff(now time.Time) bool { return h.NextRetryAtMs > now.UnixMilli() }

// truncUTF8 cuts s to at most n bytes of valid UTF-8.
func truncUTF8(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}
