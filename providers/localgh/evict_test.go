package localgh_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers/github/githubtest"
)

// closeNewPRs opens and closes PRs from..to, polling every 20 (the pulls
// list shows the 30 most recently updated), and checks each one's opened
// and closed events.
func closeNewPRs(t *testing.T, x *harness, from, to int) {
	t.Helper()
	pending := 0
	for n := from; n <= to; n++ {
		x.gh.OpenPR(repoName, githubtest.PR{Number: n})
		x.gh.Close(repoName, n)
		pending++
		if pending == 20 || n == to {
			evs := x.poll()
			require.Len(t, evs, 2*pending, "opened and closed for each of #%d..#%d", n-pending+1, n)
			pending = 0
		}
	}
}

// An old open PR outlives hundreds of newer ones in the cursor: when it
// finally merges, its terminal event is emitted.
func TestRepoOldOpenPRStillClosesAfterManyNewer(t *testing.T) {
	x := newHarness(t, nil)
	x.gh.OpenPR(repoName, githubtest.PR{Number: 1, Title: "Old open", Draft: true})
	x.gh.AddReview(repoName, 1, githubtest.Review{User: "bob", State: "COMMENTED"})
	x.gh.Advance(time.Minute) // bob's review is strictly before the baseline
	x.watch("github:acme/widgets", sentinel.UntilNever)
	require.Empty(t, x.poll())

	closeNewPRs(t, x, 2, 209) // 208 newer PRs, all closed

	var cur struct {
		PRs        map[string]json.RawMessage `json:"prs"`
		Dormant    map[string]json.RawMessage `json:"dormant"`
		EvictedMax int                        `json:"evictedMax"`
	}
	require.NoError(t, json.Unmarshal([]byte(x.h.Cursor), &cur))
	require.Len(t, cur.PRs, 200, "closed PRs are bounded")
	require.Contains(t, cur.Dormant, "1", "the old open PR is kept, compactly")
	require.Equal(t, 9, cur.EvictedMax, "#2..#9 were evicted")
	require.Less(t, len(x.h.Cursor), 48<<10)

	// An evicted closed PR coming back into the list is history.
	x.gh.AddComment(repoName, 2, githubtest.Comment{User: "dave", Body: "late thought"})
	require.Empty(t, x.poll(), "no second opened/closed for an evicted PR")

	// The old PR comes back: readiness, then only the new review.
	x.gh.SetDraft(repoName, 1, false)
	x.gh.AddReview(repoName, 1, githubtest.Review{User: "carol", State: "APPROVED"})
	evs := x.poll()
	require.Equal(t, []string{"github.pull_request.ready_for_review", "github.pull_request_review.submitted"}, types(evs))
	require.Equal(t, "carol", data(t, evs[1])["actor"])

	closeNewPRs(t, x, 210, 250) // it leaves the list again
	x.gh.Merge(repoName, 1, "carol")
	evs = x.poll()
	require.Equal(t, []string{"github.pull_request.closed"}, types(evs))
	require.Equal(t, "PR acme/widgets#1 merged - Old open", evs[0].Summary)
	require.True(t, evs[0].Terminal)
	require.Equal(t, true, data(t, evs[0])["merged"])
	require.Empty(t, x.poll())
	x.gh.Verify(t)
}
