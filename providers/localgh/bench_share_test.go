//go:build unix

package localgh_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/github"
	"github.com/agentproto/sentinel/providers/github/githubtest"
	"github.com/agentproto/sentinel/providers/localgh"
)

// BenchmarkQuietTick measures one quiet poll tick (every sentinel polled
// once, in one providers.Tick as the poll loop does) over 10 PRs: one
// sentinel per PR, ten per PR sharing the tick's fetches, and ten per PR
// without a tick (each sentinel fetching for itself, as before fetches
// were shared). Metrics are per tick: requests, quota and CPU (this
// process, which also hosts the fake GitHub).
func BenchmarkQuietTick(b *testing.B) {
	for _, c := range []struct {
		name   string
		perPR  int
		shared bool
	}{{"10-prs-x1", 1, true}, {"10-prs-x10-shared", 10, true}, {"10-prs-x10-unshared", 10, false}} {
		b.Run(c.name, func(b *testing.B) {
			s := quietPR(b)
			for n := 1; n <= 10; n++ {
				if n != 7 {
					s.OpenPR(repoName, githubtest.PR{Number: n})
				}
			}
			runner := github.NewRunner(github.Config{Env: s.Env(s.Token())})
			client, err := github.NewClient(github.ClientConfig{HTTP: s.HTTPClient(), Token: github.NewAuth(runner, "")})
			if err != nil {
				b.Fatal(err)
			}
			p, err := localgh.New(localgh.Config{Runner: runner, Client: client})
			if err != nil {
				b.Fatal(err)
			}
			var hs []sentinel.Handle
			for n := 1; n <= 10; n++ {
				for range c.perPR {
					h, err := p.Create(context.Background(), providers.CreateRequest{Spec: sentinel.Spec{
						Match: []sentinel.Clause{{Subject: fmt.Sprintf("github:%s#%d", repoName, n)}}, Until: sentinel.Until{Kind: sentinel.UntilNever}}})
					if err != nil {
						b.Fatal(err)
					}
					hs = append(hs, h)
				}
			}
			tick := func() {
				ctx := context.Background()
				if c.shared {
					ctx = providers.WithTick(ctx)
				}
				for i := range hs {
					res, err := p.Poll(ctx, hs[i], 100)
					if err != nil || res.Failure != "" {
						b.Fatalf("poll: %v %s", err, res.Failure)
					}
					hs[i].Cursor = res.Cursor
				}
			}
			tick()
			tick() // baseline, then warm the ETag cache
			s.ResetLog()
			self0, _ := cpuTime(b)
			b.ResetTimer()
			for range b.N {
				tick()
			}
			b.StopTimer()
			self1, _ := cpuTime(b)
			n := float64(b.N)
			b.ReportMetric(float64(s.QuotaUsed())/n, "quota/tick")
			b.ReportMetric(float64(self1-self0)/n, "cpu-ns/tick")
			b.ReportMetric(float64(len(s.Requests()))/n, "requests/tick")
			b.ReportMetric(float64(len(hs)), "sentinels")
		})
	}
}
