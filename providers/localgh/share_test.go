package localgh_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/github/githubtest"
)

// fleet is n sentinels per PR on prs PRs of one provider.
type fleet struct {
	x       *harness
	handles []sentinel.Handle
	prOf    []int
}

func newFleet(t *testing.T, prs, perPR int) *fleet {
	x := newHarness(t, nil)
	f := &fleet{x: x}
	for n := 1; n <= prs; n++ {
		x.gh.OpenPR(repoName, githubtest.PR{Number: n})
	}
	for n := 1; n <= prs; n++ {
		for range perPR {
			f.add(n)
		}
	}
	return f
}

// add creates one more sentinel on PR n.
func (f *fleet) add(n int) {
	f.x.watch(fmt.Sprintf("github:%s#%d", repoName, n), sentinel.UntilNever)
	f.handles = append(f.handles, f.x.h)
	f.prOf = append(f.prOf, n)
}

// tick polls the sentinels whose index which accepts (every one when nil)
// as the poll loop does: one providers.Tick for the whole tick, or none
// when shared is false. It advances their cursors and returns each one's
// event types and the API requests the tick made.
func (f *fleet) tick(t *testing.T, shared bool, which func(i int) bool) (map[int][]string, []githubtest.Request) {
	t.Helper()
	ctx := context.Background()
	if shared {
		ctx = providers.WithTick(ctx)
	}
	f.x.gh.ResetLog()
	out := map[int][]string{}
	for i, h := range f.handles {
		if which != nil && !which(i) {
			continue
		}
		res, err := f.x.p.Poll(ctx, h, 100)
		require.NoError(t, err)
		require.Empty(t, res.Failure)
		for _, ev := range res.Events {
			require.NoError(t, ev.Validate())
		}
		f.handles[i].Cursor = res.Cursor
		out[i] = types(res.Events)
	}
	var reqs []githubtest.Request
	for _, r := range f.x.gh.Requests() {
		if r.Method == "GET" && len(r.Path) > 7 && r.Path[:7] == "/repos/" {
			reqs = append(reqs, r)
		}
	}
	return out, reqs
}

// TestOneFetchPerPRPerTick: 100 sentinels on 10 PRs make the requests of
// 10 sentinels (one per PR) in a tick, quiet or not; without a shared tick
// they make ten times as many.
func TestOneFetchPerPRPerTick(t *testing.T) {
	f := newFleet(t, 10, 10)
	firstOfPR := func(i int) bool { return i%10 == 0 }

	_, baseline := f.tick(t, true, nil)
	_, quietAll := f.tick(t, true, nil)
	_, quietTen := f.tick(t, true, firstOfPR)
	require.NotEmpty(t, quietTen)
	require.Len(t, quietAll, len(quietTen), "100 sentinels on 10 PRs: the requests of 10")
	require.LessOrEqual(t, len(baseline), len(quietTen)+10, "the baseline tick shares too")
	_, unshared := f.tick(t, false, nil)
	require.Len(t, unshared, 10*len(quietTen), "without a tick every sentinel fetches")

	// A busy tick: still one request per URL.
	f.x.gh.AddComment(repoName, 3, githubtest.Comment{User: "bob", Body: "looks good"})
	f.x.gh.SetCheckRun(repoName, f.x.gh.Head(repoName, 5), "ci", "completed", "success")
	_, busy := f.tick(t, true, nil)
	requireOncePerURL(t, busy)
	require.Len(t, busy, len(quietTen))
}

// TestSharedFetchesKeepEachSentinelsOwnDiff: sentinels of one PR at
// different positions (created before and after a review) share the
// tick's answers and each gets exactly the events new to it.
func TestSharedFetchesKeepEachSentinelsOwnDiff(t *testing.T) {
	f := newFleet(t, 3, 2) // sentinels 0..5: PR 1, 1, 2, 2, 3, 3
	f.tick(t, true, nil)   // baseline
	f.x.gh.AddReview(repoName, 2, githubtest.Review{User: "carol", State: "APPROVED"})
	f.add(2) // sentinel 6: baselined after the review
	f.add(2) // sentinel 7
	evs, _ := f.tick(t, true, nil)
	for i := range f.handles {
		switch {
		case i == 2 || i == 3:
			require.Equal(t, []string{"github.pull_request_review.submitted"}, evs[i], "sentinel %d saw the review", i)
		default:
			require.Empty(t, evs[i], "sentinel %d: nothing new to it (the review is its baseline, or another PR's)", i)
		}
	}

	f.x.gh.AddComment(repoName, 2, githubtest.Comment{User: "bob", Body: "ship it"})
	f.x.gh.Merge(repoName, 1, "alice")
	evs, reqs := f.tick(t, true, nil)
	requireOncePerURL(t, reqs)
	for i := range f.handles {
		switch f.prOf[i] {
		case 1:
			require.Equal(t, []string{"github.pull_request.closed"}, evs[i], "sentinel %d: the merge", i)
		case 2:
			require.Equal(t, []string{"github.issue_comment.created"}, evs[i], "sentinel %d: the comment once", i)
		default:
			require.Empty(t, evs[i], "sentinel %d", i)
		}
	}
	// Each sentinel kept its own cursor: a second quiet tick is quiet for all.
	evs, _ = f.tick(t, true, nil)
	for i := range f.handles {
		require.Empty(t, evs[i], "sentinel %d", i)
	}
}

func requireOncePerURL(t *testing.T, reqs []githubtest.Request) {
	t.Helper()
	seen := map[string]bool{}
	for _, r := range reqs {
		u := r.Path + "?" + r.Query
		require.False(t, seen[u], "GET %s twice in one tick", u)
		seen[u] = true
	}
}
