package cluster_test

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/e2e/e2etest"
	"github.com/agentproto/sentinel/providers/github/githubtest"
)

// ghRequest is a request the fake GitHub logged, with when the test saw it
// (the log is sampled every 10 ms).
type ghRequest struct {
	githubtest.Request
	at time.Time
}

// ghLog samples the fake GitHub's request log and timestamps new entries.
type ghLog struct {
	mu   sync.Mutex
	reqs []ghRequest
}

// watchGitHub samples gh's log until the test ends.
func watchGitHub(t *testing.T, gh *githubtest.Server) *ghLog {
	l := &ghLog{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		for {
			all := gh.Requests()
			now := time.Now()
			l.mu.Lock()
			for _, r := range all[len(l.reqs):] {
				l.reqs = append(l.reqs, ghRequest{Request: r, at: now})
			}
			l.mu.Unlock()
			select {
			case <-ctx.Done():
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	return l
}

// between returns the requests seen in [from, to).
func (l *ghLog) between(from, to time.Time) []ghRequest {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []ghRequest
	for _, r := range l.reqs {
		if !r.at.Before(from) && r.at.Before(to) {
			out = append(out, r)
		}
	}
	return out
}

// quietPR is one watched pull request and how its requests are recognized.
type quietPR struct {
	repo string
	num  int
	head string
}

// poll reports whether r starts a poll of the PR (local-gh's poll opens
// with GET /repos/{repo}/pulls/{n}).
func (p quietPR) poll(r githubtest.Request) bool {
	return r.Method == http.MethodGet && strings.EqualFold(r.Path, fmt.Sprintf("/repos/%s/pulls/%d", p.repo, p.num))
}

// owns reports whether r is one of the PR's requests: the PR, its reviews
// and comments, or its head's check runs and combined status.
func (p quietPR) owns(r githubtest.Request) bool {
	base := strings.ToLower("/repos/" + p.repo)
	path := strings.ToLower(r.Path)
	switch {
	case path == fmt.Sprintf("%s/pulls/%d", base, p.num), strings.HasPrefix(path, fmt.Sprintf("%s/pulls/%d/", base, p.num)),
		strings.HasPrefix(path, fmt.Sprintf("%s/issues/%d/", base, p.num)), strings.HasPrefix(path, base+"/commits/"+strings.ToLower(p.head)+"/"):
		return true
	}
	return false
}

// pollTimes returns when the PR's polls started, in order.
func (p quietPR) pollTimes(reqs []ghRequest) []time.Time {
	var out []time.Time
	for _, r := range reqs {
		if p.poll(r.Request) {
			out = append(out, r.at)
		}
	}
	return out
}

// TestQuietPRPollsOnceAcrossNodesAndMoveOnKill runs ten quiet local-gh PR
// sentinels (two repositories) on three nodes against the fake GitHub with
// the real gh: the cluster polls each PR once per tick, each poll costs the
// requests of a single node's quiet poll (all conditional, all 304), so the
// GitHub requests per tick are the single-node count; when the node
// polling them is SIGKILLed, its PRs are polled again by another node
// within two ticks of its lease running out, and still once per tick.
func TestQuietPRPollsOnceAcrossNodesAndMoveOnKill(t *testing.T) {
	needGH(t)
	t.Parallel()
	const (
		tick     = 2 * time.Second
		leaseTTL = 3 * time.Second
	)
	gh := githubtest.New(t, githubtest.Options{})
	var prs []quietPR
	for _, repo := range []string{"acme/alpha", "acme/beta"} {
		for n := 1; n <= 5; n++ {
			gh.OpenPR(repo, githubtest.PR{Number: n, Title: fmt.Sprintf("Change %d", n)})
			prs = append(prs, quietPR{repo: repo, num: n, head: gh.Head(repo, n)})
		}
	}
	log := watchGitHub(t, gh)
	c := e2etest.StartCluster(t, binary, e2etest.ClusterOptions{Env: e2etest.GHNodeEnv(gh, "GH_HOST=github.com",
		"AGENTPROTO_POLL_ACTIVE_INTERVAL="+tick.String(), "AGENTPROTO_POLL_IDLE_INTERVAL="+tick.String(),
		"AGENTPROTO_BUS_MEMBER_TTL=2s", "AGENTPROTO_BUS_LEASE_TTL="+leaseTTL.String())})
	for i, p := range prs {
		createSentinel(t, nodeAPI(t, c, i%3), map[string]any{"subject": fmt.Sprintf("github:%s#%d", p.repo, p.num),
			"sessionId": "poll-s1", "provider": "local-gh"})
	}

	// Settle: every PR has had its baseline poll and two quiet ones.
	start := time.Now()
	eventually(t, c, 90*time.Second, func() bool {
		reqs := log.between(start, time.Now())
		for _, p := range prs {
			if len(p.pollTimes(reqs)) < 3 {
				return false
			}
		}
		return true
	}, "every PR polled three times")

	// A quiet poll of one PR is N conditional requests (the PR, its
	// reviews, its head's check runs and status, its comments): N is the
	// number of distinct endpoints a poll touches.
	const ticks = 4
	requireQuietOncePerTick(t, prs, pollWindow(t, c, log, prs, ticks), tick, ticks, "steady")
	before := make([]float64, 3)
	for i := range before {
		before[i], _ = metric(t, nodeAPI(t, c, i), `sentinel_poll_duration_seconds_count{provider="local-gh"}`)
	}

	// SIGKILL a node that polls some of them (the one that polled most).
	victim, most := -1, 0.0
	eventually(t, c, 4*tick, func() bool {
		for i := range before {
			now, _ := metric(t, nodeAPI(t, c, i), `sentinel_poll_duration_seconds_count{provider="local-gh"}`)
			if now-before[i] > most {
				victim, most = i, now-before[i]
			}
		}
		return victim >= 0
	}, "a node polls local-gh sentinels")
	killed := time.Now()
	c.Kill(victim)
	t.Logf("killed %s, which polled %.0f times in the last moments", c.Node(victim).Name, most)
	limit := leaseTTL + 2*tick
	// A loaded machine delays heartbeats, lease rounds and ticks alike:
	// the bound is asserted with room for it, the delay is logged.
	eventually(t, c, limit+10*time.Second, func() bool {
		reqs := log.between(killed.Add(500*time.Millisecond), time.Now())
		for _, p := range prs {
			if len(p.pollTimes(reqs)) == 0 {
				return false
			}
		}
		return true
	}, "every PR polled again after the kill")
	took := time.Since(killed)
	t.Logf("every PR was polled again %s after the kill (lease %s + two ticks = %s)", took.Round(100*time.Millisecond), leaseTTL, limit)

	// On two nodes: once per tick still, and quiet again once the new
	// owner's ETags are cached.
	settled := time.Now()
	eventually(t, c, 60*time.Second, func() bool {
		reqs := log.between(settled, time.Now())
		for _, p := range prs {
			if len(p.pollTimes(reqs)) < 2 {
				return false
			}
		}
		return true
	}, "every PR polled twice on the survivors")
	requireQuietOncePerTick(t, prs, pollWindow(t, c, log, prs, ticks), tick, ticks, "after the kill")
}

// pollWindow returns GitHub's requests from now until every PR has been
// polled ticks times: a window measured in the cluster's own ticks, not in
// wall time, which a loaded machine stretches (a starved node ticks late,
// and its PRs are then polled less often than the clock says, never
// twice).
func pollWindow(t *testing.T, c *e2etest.Cluster, log *ghLog, prs []quietPR, ticks int) []ghRequest {
	t.Helper()
	from := time.Now()
	var until time.Time
	eventually(t, c, 2*time.Minute, func() bool {
		now := time.Now()
		reqs := log.between(from, now)
		for _, p := range prs {
			if len(p.pollTimes(reqs)) < ticks {
				return false
			}
		}
		until = now
		return true
	}, "every PR polled %d times", ticks)
	return log.between(from, until)
}

// requireQuietOncePerTick checks a window in which every PR was polled at
// least ticks times (pollWindow): no PR is polled twice within half a
// tick (no two nodes poll it), every poll that the window holds whole
// costs the same N requests, one per endpoint, all conditional GETs
// answered 304, and nothing else is asked of GitHub, so the requests of a
// tick are the single-node count, len(prs) x N.
func requireQuietOncePerTick(t *testing.T, prs []quietPR, window []ghRequest, tick time.Duration, ticks int, phase string) {
	t.Helper()
	total := 0
	perPoll := 0
	for _, p := range prs {
		var mine []ghRequest
		for _, r := range window {
			if p.owns(r.Request) {
				mine = append(mine, r)
			}
		}
		times := p.pollTimes(mine)
		require.GreaterOrEqual(t, len(times), ticks, "%s: %s#%d polled %d times", phase, p.repo, p.num, len(times))
		for i := 1; i < len(times); i++ {
			require.GreaterOrEqual(t, times[i].Sub(times[i-1]), tick/2, "%s: %s#%d polled twice within half a tick", phase, p.repo, p.num)
		}
		// The requests of each whole poll: from its PR GET to the next.
		endpoints := map[string]bool{}
		var polls [][]ghRequest
		for _, r := range mine {
			if p.poll(r.Request) {
				polls = append(polls, nil)
			}
			if len(polls) > 0 {
				polls[len(polls)-1] = append(polls[len(polls)-1], r)
			}
		}
		if len(polls) > 1 {
			polls = polls[:len(polls)-1] // the last may run past the window
		}
		for _, pl := range polls {
			for _, r := range pl {
				require.Equal(t, http.MethodGet, r.Method, "%s: %s#%d: %s %s", phase, p.repo, p.num, r.Method, r.Path)
				require.NotEmpty(t, r.IfNoneMatch, "%s: %s#%d: %s is conditional", phase, p.repo, p.num, r.Path)
				require.Equal(t, http.StatusNotModified, r.Status, "%s: %s#%d: %s is quiet", phase, p.repo, p.num, r.Path)
				endpoints[strings.SplitN(r.Path, "?", 2)[0]] = true
			}
		}
		n := len(endpoints)
		if perPoll == 0 {
			perPoll = n
		}
		require.Equal(t, perPoll, n, "%s: %s#%d: every PR's quiet poll touches the same endpoints", phase, p.repo, p.num)
		for _, pl := range polls {
			require.Len(t, pl, n, "%s: %s#%d: one request per endpoint per poll", phase, p.repo, p.num)
		}
		total += len(mine)
	}
	owned := 0
	var stray []string
	for _, r := range window {
		mine := false
		for _, p := range prs {
			mine = mine || p.owns(r.Request)
		}
		if mine {
			owned++
		} else {
			stray = append(stray, r.Method+" "+r.Path)
		}
	}
	sort.Strings(stray)
	require.Empty(t, stray, "%s: no GitHub request outside the PRs' polls", phase)
	t.Logf("%s: %d GitHub requests for %d quiet PRs polled %d times or more each (%d per quiet poll; a single node: %d per tick)",
		phase, total, len(prs), ticks, perPoll, len(prs)*perPoll)
}
