package githubapp_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/providers/github"
)

func TestInstallationTokenIsCachedThenRefreshedBeforeExpiry(t *testing.T) {
	h := newHarness(t)
	p := h.provider()
	ctx := ctxT(t)

	c, err := p.InstallationClient(ctx, h.inst)
	require.NoError(t, err)
	_, err = c.Get(ctx, "installation/repositories")
	require.NoError(t, err)
	require.Equal(t, 1, h.gh.TokensIssued())

	// 50 minutes on: the token has 10 minutes left, more than the margin.
	h.gh.Advance(50 * time.Minute)
	_, err = c.Get(ctx, "repos/"+fixtureRepo+"/pulls")
	require.NoError(t, err)
	require.Equal(t, 1, h.gh.TokensIssued(), "a token with more than the margin left is reused")

	// 6 more: within TokenRefreshMargin of expires_at, a new one is asked for.
	h.gh.Advance(6 * time.Minute)
	_, err = c.Get(ctx, "repos/"+fixtureRepo+"/pulls")
	require.NoError(t, err)
	require.Equal(t, 2, h.gh.TokensIssued())
}

func TestShortLivedTokenIsRefreshedWithinTheMargin(t *testing.T) {
	h := newHarness(t)
	h.gh.SetTokenTTL(10 * time.Minute)
	p := h.provider()
	ctx := ctxT(t)
	c, err := p.InstallationClient(ctx, h.inst)
	require.NoError(t, err)
	_, err = c.Get(ctx, "installation/repositories")
	require.NoError(t, err)
	h.gh.Advance(6 * time.Minute) // 4 minutes left: inside TokenRefreshMargin
	_, err = c.Get(ctx, "repos/"+fixtureRepo+"/pulls")
	require.NoError(t, err)
	require.Equal(t, 2, h.gh.TokensIssued())
	require.Greater(t, github.TokenRefreshMargin, 4*time.Minute)
}

func TestRevokedTokenIsReplacedAfterA401(t *testing.T) {
	h := newHarness(t)
	p := h.provider()
	ctx := ctxT(t)
	c, err := p.InstallationClient(ctx, h.inst)
	require.NoError(t, err)
	_, err = c.Get(ctx, "installation/repositories")
	require.NoError(t, err)

	h.gh.RevokeTokens()
	_, err = c.Get(ctx, "repos/"+fixtureRepo+"/pulls")
	require.NoError(t, err, "the 401 drops the cached token and the call is made again with a new one")
	require.Equal(t, 2, h.gh.TokensIssued())
}

func TestJWTIsRefusedWhenTheKeyIsWrong(t *testing.T) {
	h := newHarness(t)
	other := writeKey(t, otherKey(t), 0o600)
	h.creds.set("privateKeyFile", other)
	err := h.provider().Sync(ctxT(t))
	require.Error(t, err)
	require.Contains(t, err.Error(), "401")
	require.False(t, strings.Contains(err.Error(), "eyJ"), "the JWT is not in the error")
}
