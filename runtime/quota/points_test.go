package quota_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/providers/github"
	"github.com/agentproto/sentinel/providers/github/githubtest"
)

// TestQuietPollsAreNotThrottled: polls answered 304 (conditional GETs of
// an unchanged list) cost no point, so the governor paces by the points
// polls spend, not by their number: once each node's first poll filled its
// ETag cache, every node polls every sentinel at every tick (runtimetest's nodes
// do not split the polls) although the sentinels
// outnumber the window's points per tick. A change costs a point per node;
// the tick after it polls every sentinel again.
func TestQuietPollsAreNotThrottled(t *testing.T) {
	const limit, sentinels = 120, 60
	qc := newSpendingCluster(t, sentinels, func(ctx context.Context, c *github.Client) error {
		_, err := c.Get(ctx, "repos/acme/widgets/pulls")
		return err
	})
	qc.gh.SetRateLimit(limit, time.Hour)
	ctx := context.Background()
	auth := "token " + qc.gh.Token()

	qc.tick(ctx) // each node's first GET fills its cache: one point each
	qc.gh.Advance(2 * time.Minute)
	for minute := 2; minute < 60; minute += 2 {
		if minute == 30 {
			qc.gh.OpenPR("acme/widgets", githubtest.PR{Number: 7}) // the list changes: its next GET costs a point per node
			qc.tick(ctx)
			qc.gh.Advance(2 * time.Minute)
			continue
		}
		before, throttled := qc.polls.Load(), qc.throttled()
		qc.tick(ctx)
		require.Equal(t, int64(3*sentinels), qc.polls.Load()-before, "minute %d: every sentinel polls (%d throttled)", minute, qc.throttled()-throttled)
		qc.gh.Advance(2 * time.Minute)
	}
	require.LessOrEqual(t, qc.gh.UsedBy(auth), 6, "only the first GET of each node and the change cost points")
	primary, _ := qc.gh.RateLimited()
	require.Zero(t, primary)
}

// TestCostlyPollsLastTheWindow: polls that each spend four points (a
// changed PR's poll reads several lists) are paced by those points: the
// cluster stays within the limit less the reserve and still polls in every
// quarter of the window instead of draining to the reserve early.
func TestCostlyPollsLastTheWindow(t *testing.T) {
	const limit, cost = 120, 4
	qc := newSpendingCluster(t, 60, func(ctx context.Context, c *github.Client) error {
		for range cost {
			if _, _, _, err := c.API(ctx, http.MethodGet, "repos/acme/widgets/pulls", nil); err != nil {
				return err
			}
		}
		return nil
	})
	qc.gh.SetRateLimit(limit, time.Hour)
	ctx := context.Background()
	auth := "token " + qc.gh.Token()
	quarters := make([]int64, 4)
	for minute := 0; minute < 60; minute += 2 {
		before := qc.polls.Load()
		qc.tick(ctx)
		quarters[minute/15] += qc.polls.Load() - before
		require.LessOrEqual(t, qc.gh.UsedBy(auth), limit-limit/10, "minute %d: the reserve is kept", minute)
		qc.gh.Advance(2 * time.Minute)
	}
	primary, _ := qc.gh.RateLimited()
	require.Zero(t, primary, "the fake never had to refuse a request")
	for q, n := range quarters {
		require.Positive(t, n, "polls in quarter %d of the window: %v", q+1, quarters)
	}
}
