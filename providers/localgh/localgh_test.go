package localgh_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/github"
	"github.com/agentproto/sentinel/providers/localgh"
)

const localghBackoff = localgh.BackoffBase

func newOffline(t *testing.T) *localgh.Provider {
	t.Helper()
	client, err := github.NewClient(github.ClientConfig{Token: github.StaticToken("x")})
	require.NoError(t, err)
	p, err := localgh.New(localgh.Config{Client: client, Runner: github.NewRunner(github.Config{Path: "/nonexistent/gh"})})
	require.NoError(t, err)
	return p
}

func TestCreate(t *testing.T) {
	p := newOffline(t)
	clause := func(s ...string) []sentinel.Clause {
		out := make([]sentinel.Clause, 0, len(s))
		for _, x := range s {
			out = append(out, sentinel.Clause{Subject: x})
		}
		return out
	}
	tests := []struct {
		name     string
		match    []sentinel.Clause
		until    string
		code     string
		contains string
		remoteID string
		state    map[string]any
	}{
		{name: "pr", match: clause("github:acme/widgets#7"), until: sentinel.UntilSubjectTerminal,
			remoteID: "acme/widgets#7", state: map[string]any{"repo": "acme/widgets", "number": 7}},
		{name: "repo until never", match: clause("github:acme/widgets"), until: sentinel.UntilNever,
			remoteID: "acme/widgets", state: map[string]any{"repo": "acme/widgets"}},
		{name: "repo until subject_terminal", match: clause("github:acme/widgets"), until: sentinel.UntilSubjectTerminal,
			code: sentinel.CodeSubjectTerminalRepo, contains: "until never"},
		{name: "no clause", match: nil, until: sentinel.UntilNever, code: sentinel.CodeInvalidInput, contains: "exactly one match clause"},
		{name: "two clauses", match: clause("github:acme/widgets#7", "github:acme/widgets#8"), until: sentinel.UntilNever,
			code: sentinel.CodeInvalidInput, contains: "exactly one match clause"},
		{name: "owner", match: clause("github:acme"), until: sentinel.UntilNever, code: sentinel.CodeInvalidSubject},
		{name: "prefix", match: clause("github:acme/widgets*"), until: sentinel.UntilNever, code: sentinel.CodeInvalidSubject},
		{name: "other scheme", match: clause("session:abc"), until: sentinel.UntilNever, code: sentinel.CodeInvalidSubject},
		{name: "path too deep", match: clause("github:acme/widgets/x"), until: sentinel.UntilNever, code: sentinel.CodeInvalidSubject},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h, err := p.Create(context.Background(), providers.CreateRequest{SentinelID: "sen_x", Spec: sentinel.Spec{
				Match: tc.match, Until: sentinel.Until{Kind: tc.until},
			}})
			if tc.code != "" {
				require.ErrorIs(t, err, &sentinel.Error{Code: tc.code})
				require.Contains(t, err.Error(), tc.contains)
				return
			}
			require.NoError(t, err)
			require.Equal(t, localgh.Slug, h.Provider)
			require.Equal(t, tc.remoteID, h.RemoteID)
			require.Equal(t, tc.state, h.State)
			require.Empty(t, h.Cursor)
			got, err := p.Attach(context.Background(), h, providers.Delivery{Mode: providers.ModePoll})
			require.NoError(t, err)
			require.Equal(t, h, got)
			require.NoError(t, p.Cancel(context.Background(), h))
			require.NoError(t, p.Cancel(context.Background(), h), "idempotent")
		})
	}
}

func TestBadHandle(t *testing.T) {
	p := newOffline(t)
	h := sentinel.Handle{Provider: localgh.Slug, RemoteID: "not a repo"}
	_, err := p.Poll(context.Background(), h, 10)
	require.Error(t, err)
	_, err = p.Attach(context.Background(), h, providers.Delivery{})
	require.Error(t, err)
	st, err := p.Status(context.Background(), h)
	require.NoError(t, err)
	require.False(t, st.OK)
}

func TestMetadata(t *testing.T) {
	p := newOffline(t)
	require.Equal(t, localgh.Slug, p.Info().Slug)
	require.False(t, p.Info().RequiresSetup)
	require.Equal(t, providers.Capabilities{Subjects: []string{"github"}, Poll: true, TypicalLatencyMs: 30000}, p.Capabilities())
	tests := []struct {
		subject string
		want    []string
	}{
		{subject: "github:acme/widgets#7", want: sentinel.DefaultPRTypes()},
		{subject: "github:acme/widgets", want: sentinel.DefaultRepoTypes()},
		{subject: "github:acme", want: []string{}},
		{subject: "session:x", want: []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.subject, func(t *testing.T) {
			require.Equal(t, tc.want, p.DefaultTypes(tc.subject))
		})
	}
	rd := p.Readiness(context.Background())
	require.False(t, rd.Ready)
	require.Contains(t, rd.Reason, "install the GitHub CLI (gh)")
}
