package github_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/providers/github"
	"github.com/agentproto/sentinel/providers/github/githubtest"
)

// TestEveryRESTCallNamesTheAPIVersion: the gh runner (real gh), the
// client's conditional GETs, its pages and its API calls all send
// X-GitHub-Api-Version: 2022-11-28, so GitHub's breaking version dated
// 2026-03-10 never becomes ours by default.
func TestEveryRESTCallNamesTheAPIVersion(t *testing.T) {
	requireGH(t)
	s := githubtest.New(t, githubtest.Options{})
	s.OpenPR("acme/widgets", githubtest.PR{Number: 7})
	ctx := context.Background()

	r := github.NewRunner(github.Config{Env: s.Env(s.Token())})
	_, _, _, err := r.API(ctx, http.MethodGet, "repos/acme/widgets/pulls/7", nil)
	require.NoError(t, err)
	_, _, _, err = r.API(ctx, http.MethodPost, "repos/acme/widgets/hooks", []byte(`{"name":"web","config":{"url":"https://example.test/in"}}`))
	require.NoError(t, err)

	c := newClient(t, s, github.StaticToken(s.Token()), &clock{t: s.Now()})
	_, err = c.Get(ctx, "/repos/acme/widgets/pulls/7")
	require.NoError(t, err)
	_, err = c.Get(ctx, "/repos/acme/widgets/pulls/7") // conditional: a 304
	require.NoError(t, err)
	_, err = c.GetPages(ctx, "/repos/acme/widgets/pulls?per_page=100")
	require.NoError(t, err)
	_, _, _, err = c.API(ctx, http.MethodGet, "repos/acme/widgets/hooks", nil)
	require.NoError(t, err)

	reqs := s.Requests()
	require.GreaterOrEqual(t, len(reqs), 6)
	for _, rq := range reqs {
		if rq.Path == "/graphql" {
			continue // gh's own auth probe is GraphQL, not REST
		}
		require.Equal(t, github.APIVersion, rq.APIVersion, "%s %s", rq.Method, rq.Path)
	}
	require.Equal(t, "2022-11-28", github.APIVersion)
	s.Verify(t)
}
