package localgh

import (
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/agentproto/sentinel/providers/github"
)

// compact bounds a repository cursor after a successful tick (the bounds
// are documented at maxClosedPRs): closed PRs whose closure was reported
// keep a compact state and beyond maxClosedPRs the lowest numbers are
// evicted (EvictedMax records how far); open PRs that left the pulls list
// become dormant, and beyond maxDormantPRs the least recently updated
// dormant PRs are forgotten. Open PRs are never evicted for closed ones.
func compact(c *repoCursor) {
	var closed []int
	for k, e := range c.PRs {
		n, _ := strconv.Atoi(k)
		switch {
		case e.ClosedEmitted && e.Snap.State != stateOpen:
			e.Snap = snapshot{State: e.Snap.State, ClosedAt: e.Snap.ClosedAt, Head: e.Snap.Head, Updated: e.Snap.Updated}
			closed = append(closed, n)
		case e.Snap.State == stateOpen && !e.InList:
			if c.Dormant == nil {
				c.Dormant = map[string]dormant{}
			}
			c.Dormant[k] = toDormant(e)
			delete(c.PRs, k)
		}
	}
	if len(closed) > maxClosedPRs {
		sort.Ints(closed)
		for _, n := range closed[:len(closed)-maxClosedPRs] {
			delete(c.PRs, strconv.Itoa(n))
			c.EvictedMax = max(c.EvictedMax, n)
		}
	}
	if len(c.Dormant) > maxDormantPRs {
		keys := make([]string, 0, len(c.Dormant))
		for k := range c.Dormant {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { // least recently updated first, then lowest number
			a, b := c.Dormant[keys[i]], c.Dormant[keys[j]]
			if a.Updated != b.Updated {
				return a.Updated < b.Updated
			}
			na, _ := strconv.Atoi(keys[i])
			nb, _ := strconv.Atoi(keys[j])
			return na < nb
		})
		for _, k := range keys[:len(keys)-maxDormantPRs] {
			delete(c.Dormant, k)
		}
	}
}

// toDormant compacts an open PR that left the list.
func toDormant(e *repoPR) dormant {
	d := dormant{Updated: parseTime(e.Snap.Updated).Unix(), Draft: e.Snap.Draft, ReviewsAbove: e.Snap.ReviewsAbove}
	for _, id := range e.Snap.Reviews {
		d.ReviewsAbove = max(d.ReviewsAbove, id)
	}
	if from := parseTime(e.Snap.ReviewsFrom); !from.IsZero() {
		d.ReviewsFrom = from.Unix()
	}
	if head, verdict, ok := strings.Cut(e.CIReported, ":"); ok {
		d.CI = head[:min(len(head), dormantHead)] + ":" + verdict
	}
	return d
}

// revive turns a dormant PR listed again into the state its diff starts
// from: open, with its draft flag, the reviews already seen and, when the
// head is the one its CI verdict was reported for, that verdict.
func (d dormant) revive(pr *github.PullRequest) *repoPR {
	e := &repoPR{Snap: snapshot{State: stateOpen, Draft: d.Draft, ReviewsAbove: d.ReviewsAbove,
		Updated: time.Unix(d.Updated, 0).UTC().Format(time.RFC3339)}}
	if d.ReviewsFrom != 0 {
		e.Snap.ReviewsFrom = time.Unix(d.ReviewsFrom, 0).UTC().Format(time.RFC3339)
	}
	if head, verdict, ok := strings.Cut(d.CI, ":"); ok && head != "" && strings.HasPrefix(pr.Head.SHA, head) {
		e.CIReported = pr.Head.SHA + ":" + verdict
		e.Snap.Head = pr.Head.SHA
	}
	return e
}
