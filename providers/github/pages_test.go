package github_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/github"
	"github.com/agentproto/sentinel/providers/github/githubtest"
)

const reviewsPath = "/repos/acme/widgets/pulls/7/reviews?per_page=100"

// addReviews adds n reviews to acme/widgets#7.
func addReviews(s *githubtest.Server, n int) {
	for i := range n {
		s.AddReview("acme/widgets", 7, githubtest.Review{User: "r" + strconv.Itoa(i), State: "COMMENTED"})
	}
}

// items decodes and concatenates the pages' JSON arrays.
func items(t *testing.T, ps *github.Pages) int {
	t.Helper()
	n := 0
	for _, r := range ps.Responses {
		var page []json.RawMessage
		require.NoError(t, json.Unmarshal(r.Body, &page))
		n += len(page)
	}
	return n
}

func TestGetPagesFollowsLinkAndStaysFree(t *testing.T) {
	s := githubtest.New(t, githubtest.Options{})
	s.OpenPR("acme/widgets", githubtest.PR{Number: 7})
	addReviews(s, 250)
	c := newClient(t, s, github.StaticToken(s.Token()), &clock{t: s.Now()})
	ctx := context.Background()

	ps, err := c.GetPages(ctx, reviewsPath)
	require.NoError(t, err)
	require.Len(t, ps.Responses, 3)
	require.False(t, ps.Truncated)
	require.Equal(t, 250, items(t, ps))
	require.Len(t, ps.ETags(), 3)

	s.ResetLog()
	again, err := c.GetPages(ctx, reviewsPath)
	require.NoError(t, err)
	require.Equal(t, ps.ETags(), again.ETags())
	require.Equal(t, 250, items(t, again))
	require.Equal(t, 0, s.QuotaUsed(), "a quiet multi-page list costs no quota")
	require.Len(t, s.Requests(), 3)
	for _, r := range s.Requests() {
		require.Equal(t, http.StatusNotModified, r.Status, r.Path)
	}
	s.Verify(t)
}

func TestGetPagesSeesGrowthPastAFullPage(t *testing.T) {
	for _, noLink := range []bool{false, true} {
		t.Run("noLinkOn304="+strconv.FormatBool(noLink), func(t *testing.T) {
			s := githubtest.New(t, githubtest.Options{NoLinkOn304: noLink})
			s.OpenPR("acme/widgets", githubtest.PR{Number: 7})
			addReviews(s, 100)
			c := newClient(t, s, github.StaticToken(s.Token()), &clock{t: s.Now()})
			ctx := context.Background()
			ps, err := c.GetPages(ctx, reviewsPath)
			require.NoError(t, err)
			require.Len(t, ps.Responses, 2, "a full last page is followed by a probe of the next")
			require.Equal(t, 100, items(t, ps))

			s.ResetLog()
			_, err = c.GetPages(ctx, reviewsPath)
			require.NoError(t, err)
			require.Equal(t, 0, s.QuotaUsed(), "the probe answers 304 too")

			addReviews(s, 1) // page 1 is unchanged: it answers 304
			ps, err = c.GetPages(ctx, reviewsPath)
			require.NoError(t, err)
			require.True(t, ps.Responses[0].NotModified)
			require.Equal(t, 101, items(t, ps))
			s.Verify(t)
		})
	}
}

func TestGetPagesBounded(t *testing.T) {
	s := githubtest.New(t, githubtest.Options{})
	s.OpenPR("acme/widgets", githubtest.PR{Number: 7})
	addReviews(s, 250)
	c, err := github.NewClient(github.ClientConfig{HTTP: s.HTTPClient(), Token: github.StaticToken(s.Token()), MaxPages: 2})
	require.NoError(t, err)
	ps, err := c.GetPages(context.Background(), reviewsPath)
	require.NoError(t, err)
	require.True(t, ps.Truncated)
	require.Len(t, ps.Responses, 2)
}

func TestGetPagesRefusesForeignNext(t *testing.T) {
	s := githubtest.New(t, githubtest.Options{})
	s.Inject(githubtest.Fault{Path: "/repos/acme/widgets/pulls/7/reviews", Status: http.StatusOK, Body: "[]",
		Header: http.Header{"Link": {`<https://evil.example/steal?page=2>; rel="next"`}}})
	c := newClient(t, s, github.StaticToken(s.Token()), &clock{t: s.Now()})
	_, err := c.GetPages(context.Background(), reviewsPath)
	require.ErrorContains(t, err, "outside the API root")
	require.Equal(t, providers.ReasonInvalid, providers.ReasonOf(err))
	require.Len(t, s.Requests(), 1, "nothing is sent to the foreign host")
}
