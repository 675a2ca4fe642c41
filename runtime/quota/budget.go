package quota

import "time"

// Budget is one credential's budget for one resource, as the cluster
// knows it. It never holds a credential.
type Budget struct {
	Credential string    `json:"credential"`
	Resource   string    `json:"resource"`
	Limit      int       `json:"limit"`
	Remaining  int       `json:"remaining"`
	Used       int       `json:"used"`
	Reset      time.Time `json:"reset"`
	// PausedUntil is the end of a secondary-limit pause (zero: none);
	// Backoff the length of the last one, doubled when another comes
	// within backoffMemory.
	PausedUntil time.Time     `json:"pausedUntil,omitzero"`
	Backoff     time.Duration `json:"backoff,omitempty"`
	// Secondaries counts the secondary limits met.
	Secondaries int `json:"secondaries,omitempty"`
	// UpdatedAt is when a node last reported it, and Node which.
	UpdatedAt time.Time `json:"updatedAt"`
	Node      string    `json:"node,omitempty"`
}

// Backoff bounds of secondary limits.
const (
	backoffMemory = 10 * time.Minute
	maxBackoff    = time.Hour
)

// merge folds o (another node's report, or the stored one) into b: the
// later window wins; within one window the lower remaining (GitHub's count
// only falls) and the later pause win. It reports whether b changed.
func (b *Budget) merge(o Budget) bool {
	changed := false
	switch {
	case o.Reset.After(b.Reset):
		b.Limit, b.Remaining, b.Used, b.Reset = o.Limit, o.Remaining, o.Used, o.Reset
		changed = true
	case o.Reset.Equal(b.Reset) && o.Remaining < b.Remaining:
		b.Remaining, b.Used = o.Remaining, max(b.Used, o.Used)
		if o.Limit > 0 {
			b.Limit = o.Limit
		}
		changed = true
	}
	if o.PausedUntil.After(b.PausedUntil) {
		b.PausedUntil, b.Backoff = o.PausedUntil, o.Backoff
		changed = true
	}
	if o.Secondaries > b.Secondaries {
		b.Secondaries = o.Secondaries
		changed = true
	}
	if o.UpdatedAt.After(b.UpdatedAt) {
		b.UpdatedAt, b.Node = o.UpdatedAt, o.Node
	}
	return changed
}

// reserve is the part of the limit kept for interactive calls.
func (b *Budget) reserve(fraction float64, least int) int {
	r := int(float64(b.Limit) * fraction)
	return min(max(r, least), b.Limit)
}

// windowKnown reports whether b holds the numbers of a window that has
// not reset at now.
func (b *Budget) windowKnown(now time.Time) bool {
	return b.Remaining >= 0 && b.Limit > 0 && now.Before(b.Reset)
}

// Paused reports whether a secondary limit pauses the credential at now.
func (b *Budget) Paused(now time.Time) bool { return now.Before(b.PausedUntil) }
