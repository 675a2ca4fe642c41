package principals_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/bus/bustest"
	"github.com/agentproto/sentinel/runtime/principals"
)

func open(t *testing.T, env *bustest.Env) *principals.Store {
	t.Helper()
	s, err := principals.Open(context.Background(), env.Bus, principals.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	require.NoError(t, err)
	t.Cleanup(s.Stop)
	return s
}

// A named token is shown once and kept only as a hash: the bucket never
// holds the secret. It authenticates as its principal; a wrong secret, a
// malformed token and a revoked one do not.
func TestNamedTokensAreHashedShownOnceAndRevocable(t *testing.T) {
	env := bustest.Start(t)
	s := open(t, env)
	ctx := context.Background()
	tok, rec, err := s.Create(ctx, "ci-bot", sentinel.ScopeAgent, "ci-", "operator")
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(tok, "sntl_ci-bot_"), tok)

	kv, err := env.JS.KeyValue(ctx, principals.Bucket)
	require.NoError(t, err)
	e, err := kv.Get(ctx, "ci-bot")
	require.NoError(t, err)
	secret := tok[strings.LastIndexByte(tok, '_')+1:]
	require.NotContains(t, string(e.Value()), secret, "the bucket never holds the secret")
	require.NotContains(t, string(e.Value()), tok)
	var stored principals.Record
	require.NoError(t, json.Unmarshal(e.Value(), &stored))
	require.Equal(t, rec.Hash, stored.Hash)

	p, ok := s.Authenticate(ctx, tok)
	require.True(t, ok)
	require.Equal(t, sentinel.Principal{ID: "token:" + rec.ID, Name: "ci-bot", Scope: sentinel.ScopeAgent, Sessions: "ci-"}, p)
	for _, bad := range []string{tok[:len(tok)-1] + "0", "sntl_ci-bot_" + strings.Repeat("a", 64), "sntl_ci-bot", "ci-bot", "sntl__" + secret, ""} {
		if bad == tok {
			continue
		}
		_, ok := s.Authenticate(ctx, bad)
		require.False(t, ok, bad)
	}

	list := s.List(ctx)
	require.Len(t, list, 1)
	require.Equal(t, "ci-bot", list[0].Name)

	_, _, err = s.Create(ctx, "ci-bot", sentinel.ScopeRead, "", "operator")
	require.ErrorIs(t, err, &sentinel.Error{Code: sentinel.CodeTokenExists})

	require.NoError(t, s.Revoke(ctx, "ci-bot"))
	_, ok = s.Authenticate(ctx, tok)
	require.False(t, ok, "revoked")
	require.ErrorIs(t, s.Revoke(ctx, "ci-bot"), &sentinel.Error{Code: sentinel.CodeTokenNotFound})
}

// A token created through one store (one node) is accepted by another
// over the same bucket at once, before its watcher delivers the record,
// and refused once it is revoked there.
func TestEveryNodeAcceptsANamedToken(t *testing.T) {
	env := bustest.Start(t)
	a, b := open(t, env), open(t, env)
	ctx := context.Background()
	tok, _, err := a.Create(ctx, "reader", sentinel.ScopeRead, "", "operator")
	require.NoError(t, err)
	p, ok := b.Authenticate(ctx, tok)
	require.True(t, ok)
	require.Equal(t, sentinel.ScopeRead, p.Scope)
	require.NoError(t, a.Revoke(ctx, "reader"))
	bustest.Eventually(t, 5*time.Second, func() bool { _, ok := b.Authenticate(ctx, tok); return !ok }, "the other node refuses the revoked token")
}

// Bad fields are refused with invalid_input.
func TestNamedTokenValidation(t *testing.T) {
	cases := []struct {
		name, tokName, sessions string
		scope                   sentinel.Scope
	}{
		{"empty name", "", "", sentinel.ScopeRead},
		{"upper case", "CI", "", sentinel.ScopeRead},
		{"underscore", "ci_bot", "", sentinel.ScopeRead},
		{"leading dash", "-ci", "", sentinel.ScopeRead},
		{"the operator's", "operator", "", sentinel.ScopeAdmin},
		{"unknown scope", "x", "", sentinel.Scope("root")},
		{"agent without sessions", "x", "", sentinel.ScopeAgent},
		{"admin with sessions", "x", "s-", sentinel.ScopeAdmin},
		{"bad prefix", "x", "a.b", sentinel.ScopeAgent},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.ErrorIs(t, principals.Validate(tc.tokName, tc.scope, tc.sessions), &sentinel.Error{Code: sentinel.CodeInvalidInput})
		})
	}
	require.NoError(t, principals.Validate("agent-1", sentinel.ScopeAgent, "*"))
	require.NoError(t, principals.Validate("agent-1", sentinel.ScopeAgent, "s1-"))
	require.NoError(t, principals.Validate("dash", sentinel.ScopeRead, ""))
}
