package localgh_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/providers/github/githubtest"
)

// TestPolledEventsOfTheAuthenticatedUserAreSelfCaused: a review and a
// comment by the user the token belongs to (GET /user on the fake: the
// viewer octocat) are selfcaused; another user's are not.
func TestPolledEventsOfTheAuthenticatedUserAreSelfCaused(t *testing.T) {
	x := openWatched(t)
	x.gh.AddReview(repoName, 7, githubtest.Review{User: "octocat", State: "COMMENTED"})
	x.gh.AddReview(repoName, 7, githubtest.Review{User: "bob", State: "APPROVED"})
	x.gh.AddComment(repoName, 7, githubtest.Comment{User: "OctoCat", Body: "pushed a fix"})
	evs := x.poll()
	require.Len(t, evs, 3)
	self := map[string]bool{}
	for _, ev := range evs {
		self[data(t, ev)["actor"].(string)] = ev.SelfCaused
		require.NoError(t, ev.Validate())
	}
	require.Equal(t, map[string]bool{"octocat": true, "bob": false, "OctoCat": true}, self)

	x.gh.AddComment(repoName, 7, githubtest.Comment{User: "alice", Body: "thanks"})
	evs = x.poll()
	require.Len(t, evs, 1)
	require.False(t, evs[0].SelfCaused)
	users := 0
	for _, r := range x.gh.Requests() {
		if r.Path == "/user" {
			users++
		}
	}
	require.Equal(t, 1, users, "GET /user is asked once and cached")
	x.gh.Verify(t)
}
