package github_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/github"
	"github.com/agentproto/sentinel/providers/github/githubtest"
)

func TestCheckRESTPath(t *testing.T) {
	for _, tc := range []struct {
		path string
		ok   bool
	}{
		{"repos/acme/widgets/hooks", true},
		{"/repos/a.b/.github/pulls?state=all&per_page=100", true},
		{"repos/acme/.../pulls", true},
		{"repos/../widgets/hooks", false},
		{"repos/acme/../hooks", false},
		{"repos/acme/./hooks", false},
		{"/repos/acme/%2e%2e/hooks", false},
		{"repos/acme/%2E/pulls?x=..", false},
		{"repos/acme/widgets/pulls?q=../x", true},
	} {
		t.Run(tc.path, func(t *testing.T) {
			err := github.CheckRESTPath(tc.path)
			if tc.ok {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, github.ErrDotSegment)
			require.Equal(t, providers.ReasonInvalid, providers.ReasonOf(err))
		})
	}
}

// TestDotSegmentPathsAreNotSent: neither the REST client nor gh is asked to
// call a path with a dot segment; the fake GitHub sees no request.
func TestDotSegmentPathsAreNotSent(t *testing.T) {
	s := githubtest.New(t, githubtest.Options{})
	s.AddRepo("acme/widgets")
	c := newClient(t, s, github.StaticToken(s.Token()), &clock{t: s.Now()})
	_, err := c.Get(context.Background(), "repos/acme/../widgets/pulls")
	require.ErrorIs(t, err, github.ErrDotSegment)
	r := github.NewRunner(github.Config{Env: s.Env(s.Token())})
	status, _, _, err := r.API(context.Background(), http.MethodPost, "repos/../acme/widgets/hooks", []byte(`{}`))
	require.True(t, errors.Is(err, github.ErrDotSegment), "%v", err)
	require.Zero(t, status)
	require.Empty(t, s.Requests())
}
