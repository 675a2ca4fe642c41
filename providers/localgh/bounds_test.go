package localgh

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestCompactBoundsTheRepoCursor(t *testing.T) {
	base := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	head := "0123456789abcdef0123456789abcdef01234567"
	c := repoCursor{V: cursorVersion, PRs: map[string]*repoPR{}}
	const open = maxDormantPRs + 500
	for n := 1; n <= open; n++ { // open PRs out of the list, updated in number order
		c.PRs[strconv.Itoa(n)] = &repoPR{CIReported: head + ":success", Snap: snapshot{
			State: stateOpen, Head: head, Title: "a long title that is dropped once dormant", URL: "https://github.com/acme/widgets/pull/" + strconv.Itoa(n),
			Updated: base.Add(time.Duration(n) * time.Minute).Format(time.RFC3339), ReviewsFrom: base.Format(time.RFC3339),
			Reviews: []int64{int64(9_000_000_000 + n)},
		}}
	}
	for n := open + 1; n <= open+300; n++ { // closed, reported
		c.PRs[strconv.Itoa(n)] = &repoPR{ClosedEmitted: true, Snap: snapshot{State: stateMerged, Head: head,
			ClosedAt: base.Format(time.RFC3339), Updated: base.Format(time.RFC3339), Title: "x"}}
	}
	c.PRs["99999"] = &repoPR{InList: true, Snap: snapshot{State: stateOpen, Head: head}}
	compact(&c)

	require.Len(t, c.Dormant, maxDormantPRs)
	require.NotContains(t, c.Dormant, "500", "the least recently updated dormant PRs go first")
	require.Contains(t, c.Dormant, "501")
	require.Equal(t, dormant{Updated: base.Add(501 * time.Minute).Unix(), ReviewsAbove: 9_000_000_501,
		ReviewsFrom: base.Unix(), CI: head[:dormantHead] + ":success"}, c.Dormant["501"])
	require.Len(t, c.PRs, maxClosedPRs+1, "closed PRs capped; the listed open one kept")
	require.Contains(t, c.PRs, "99999")
	require.Equal(t, open+100, c.EvictedMax)
	size := len(encode(c))
	require.Less(t, size, 300<<10, "the worst-case cursor stays far below the 1 MiB record limit")
	t.Logf("worst-case repo cursor: %d bytes", size)

	back := parseRepoCursor(encode(c))
	require.Equal(t, c.Dormant, back.Dormant)
	require.Equal(t, c.EvictedMax, back.EvictedMax)
}
