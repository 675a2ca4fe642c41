package localgh_test

import (
	"fmt"
	"testing"

	"github.com/agentproto/sentinel/providers/github/githubtest"
	"github.com/agentproto/sentinel/providers/providertest"
)

func TestConformance(t *testing.T) {
	x := newHarness(t, nil)
	x.gh.OpenPR(repoName, githubtest.PR{Number: 7, Title: "Add sprockets", Head: "aaaa"})
	n := 0
	providertest.RunPoller(t, providertest.Harness{
		Provider: x.p,
		Subject:  "github:" + repoName + "#7",
		Emit: func(t providertest.T, count int) {
			for i := 0; i < count; i++ {
				n++
				x.gh.AddReview(repoName, 7, githubtest.Review{User: fmt.Sprintf("reviewer%d", n), State: "APPROVED"})
			}
		},
	})
}
