//go:build unix

package localgh_test

import (
	"context"
	"net/http"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/github"
	"github.com/agentproto/sentinel/providers/github/githubtest"
	"github.com/agentproto/sentinel/providers/localgh"
)

// cpuTime returns the user+system CPU time of this process and of its
// waited-for children.
func cpuTime(b *testing.B) (self, children time.Duration) {
	b.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	self = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		b.Fatal(err)
	}
	return self, time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// quietPR starts a fake with a watched PR that has a review, a green check,
// a status and a comment, so a quiet poll reads realistic bodies.
func quietPR(b *testing.B) *githubtest.Server {
	b.Helper()
	if _, err := exec.LookPath("gh"); err != nil {
		b.Skip("gh (GitHub CLI) is not on PATH; install it (apt-get install -y gh) to run this benchmark")
	}
	s := githubtest.New(b, githubtest.Options{})
	s.OpenPR(repoName, githubtest.PR{Number: 7, Title: "Add sprockets"})
	head := s.Head(repoName, 7)
	s.AddReview(repoName, 7, githubtest.Review{User: "bob", State: "APPROVED"})
	s.SetCheckRun(repoName, head, "build", "completed", "success")
	s.SetStatus(repoName, head, "ci/legacy", "success")
	s.AddComment(repoName, 7, githubtest.Comment{User: "bob", Body: "LGTM"})
	return s
}

// measure runs poll b.N times and reports CPU (this process, which also
// hosts the fake, plus gh children) and quota points per poll.
func measure(b *testing.B, s *githubtest.Server, poll func()) {
	b.Helper()
	s.ResetLog()
	self0, kids0 := cpuTime(b)
	b.ResetTimer()
	for range b.N {
		poll()
	}
	b.StopTimer()
	self1, kids1 := cpuTime(b)
	n := float64(b.N)
	b.ReportMetric(float64(s.QuotaUsed())/n, "quota/poll")
	b.ReportMetric(float64((self1-self0)+(kids1-kids0))/n, "cpu-ns/poll")
	b.ReportMetric(float64(kids1-kids0)/n, "child-cpu-ns/poll")
	b.ReportMetric(float64(len(s.Requests()))/n, "requests/poll")
}

// BenchmarkQuietPoll compares, against the same fake, a quiet poll of a
// watched PR by local-gh (in-process conditional requests: PR, reviews,
// check runs, status, comments) with the reference's approach (three
// `gh api` processes: pulls/N, reviews, check-runs).
func BenchmarkQuietPoll(b *testing.B) {
	b.Run("localgh-inprocess", func(b *testing.B) {
		s := quietPR(b)
		runner := github.NewRunner(github.Config{Env: s.Env(s.Token())})
		client, err := github.NewClient(github.ClientConfig{HTTP: s.HTTPClient(), Token: github.NewAuth(runner, "")})
		if err != nil {
			b.Fatal(err)
		}
		p, err := localgh.New(localgh.Config{Runner: runner, Client: client})
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		h, err := p.Create(ctx, providers.CreateRequest{Spec: sentinel.Spec{
			Match: []sentinel.Clause{{Subject: "github:acme/widgets#7"}}, Until: sentinel.Until{Kind: sentinel.UntilSubjectTerminal},
		}})
		if err != nil {
			b.Fatal(err)
		}
		for range 2 { // baseline, then one poll to warm the ETag cache
			res, err := p.Poll(ctx, h, 100)
			if err != nil || len(res.Events) != 0 {
				b.Fatalf("warm-up: %v %d events", err, len(res.Events))
			}
			h.Cursor = res.Cursor
		}
		measure(b, s, func() {
			res, err := p.Poll(ctx, h, 100)
			if err != nil || len(res.Events) != 0 || res.Cursor != h.Cursor {
				b.Fatalf("quiet poll: %v %d events", err, len(res.Events))
			}
		})
		if st, _ := p.Status(ctx, h); !st.OK {
			b.Fatalf("unhealthy: %s", st.Detail)
		}
		s.Verify(b)
	})
	b.Run("reference-gh-api-x3", func(b *testing.B) {
		s := quietPR(b)
		runner := github.NewRunner(github.Config{Env: s.Env(s.Token())})
		ctx := context.Background()
		head := s.Head(repoName, 7)
		paths := []string{
			"repos/acme/widgets/pulls/7",
			"repos/acme/widgets/pulls/7/reviews?per_page=100",
			"repos/acme/widgets/commits/" + head + "/check-runs?per_page=100",
		}
		measure(b, s, func() {
			for _, p := range paths {
				out, _, err := runner.Run(ctx, nil, "api", "-H", "Accept: "+github.AcceptJSON, p)
				if err != nil || len(out) == 0 {
					b.Fatalf("gh api %s: %v", p, err)
				}
			}
		})
		if got := s.Count(http.MethodGet, "/repos/"); got != 3*b.N {
			b.Fatalf("requests %d, want %d", got, 3*b.N)
		}
		s.Verify(b)
	})
}
