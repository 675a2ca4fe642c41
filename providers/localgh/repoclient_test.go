package localgh_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/github"
	"github.com/agentproto/sentinel/providers/github/githubtest"
	"github.com/agentproto/sentinel/providers/localgh"
)

// TestPollsOfAnInstalledRepositorySpendTheInstallationsQuota: with a
// GitHub App installed on acme/widgets, local-gh's polls of that
// repository go out with the installation's token, as does the watch's
// reach check; the user's token spends nothing on it.
func TestPollsOfAnInstalledRepositorySpendTheInstallationsQuota(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	s := githubtest.New(t, githubtest.Options{})
	s.SetRateLimit(5000, time.Hour)
	s.SetApp(9, "sentinel", &key.PublicKey)
	s.OpenPR(repoName, githubtest.PR{Number: 7, Title: "Add sprockets", Author: "alice"})
	inst := s.Install("acme", repoName)

	user, err := github.NewClient(github.ClientConfig{HTTP: s.HTTPClient(), Token: github.StaticToken(s.Token()), Now: s.Now})
	require.NoError(t, err)
	app, err := github.NewAppAuth(github.AppAuthConfig{HTTP: s.HTTPClient(), Now: s.Now,
		Sign: func(_ context.Context, now time.Time) (string, time.Time, error) {
			return github.SignAppJWT(key, "9", now)
		}})
	require.NoError(t, err)
	installed, err := github.NewClient(github.ClientConfig{HTTP: s.HTTPClient(), Token: app.Installation(inst), Now: s.Now, Credential: "installation"})
	require.NoError(t, err)
	p, err := localgh.New(localgh.Config{Runner: github.NewRunner(github.Config{Env: s.Env(s.Token())}), Client: user, Now: s.Now,
		RepoClient: func(_ context.Context, repo string) (*github.Client, bool) { return installed, repo == repoName }})
	require.NoError(t, err)

	spec := sentinel.Spec{Match: []sentinel.Clause{{Subject: "github:" + repoName + "#7"}}}
	problem, _ := p.Reachable(context.Background(), spec) // the watch's reach check, as the service runs it
	require.Empty(t, problem)
	h, err := p.Create(context.Background(), providers.CreateRequest{SentinelID: "sen_x", Spec: spec})
	require.NoError(t, err)
	_, err = p.Poll(context.Background(), h, 50)
	require.NoError(t, err)
	require.Positive(t, s.Count("GET", "/repos/"+repoName+"/pulls/7"))
	require.Zero(t, s.UsedBy("token "+s.Token()), "the user's token spent nothing on the installed repository")
	require.Equal(t, 1, s.TokensIssued())
}
