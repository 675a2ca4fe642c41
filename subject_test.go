package sentinel_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
)

func TestParseSubject(t *testing.T) {
	cases := []struct {
		name, in    string
		allowPrefix bool
		want        sentinel.Subject
		wantErr     bool
	}{
		{name: "pr", in: "github:agentproto/ts#1428", want: sentinel.Subject{Scheme: "github", Path: "agentproto/ts#1428"}},
		{name: "prefix", in: "github:agentproto/ts*", allowPrefix: true, want: sentinel.Subject{Scheme: "github", Path: "agentproto/ts", Prefix: true}},
		{name: "prefix refused for events", in: "github:agentproto/ts*", wantErr: true},
		{name: "scheme only prefix", in: "github:*", allowPrefix: true, want: sentinel.Subject{Scheme: "github", Prefix: true}},
		{name: "no colon", in: "agentproto/ts", wantErr: true},
		{name: "empty", in: "", wantErr: true},
		{name: "empty path", in: "github:", wantErr: true},
		{name: "bad scheme", in: "1x:y", wantErr: true},
		{name: "inner star", in: "github:a*b", allowPrefix: true, wantErr: true},
		{name: "whitespace", in: "github:a b", wantErr: true},
		{name: "other scheme", in: "jira:PROJ-12", want: sentinel.Subject{Scheme: "jira", Path: "PROJ-12"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := sentinel.ParseSubject(tc.in, tc.allowPrefix)
			if tc.wantErr {
				require.Error(t, err)
				require.ErrorIs(t, err, &sentinel.Error{Code: sentinel.CodeInvalidSubject})
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
			require.Equal(t, tc.in, got.String())
		})
	}
}

func TestGitHubHierarchy(t *testing.T) {
	cases := []struct {
		name, in string
		want     []string
		wantErr  bool
	}{
		{name: "pr", in: "github:agentproto/ts#1428", want: []string{"github:agentproto/ts#1428", "github:agentproto/ts", "github:agentproto"}},
		{name: "repo", in: "github:agentproto/ts", want: []string{"github:agentproto/ts", "github:agentproto"}},
		{name: "owner", in: "github:agentproto", want: []string{"github:agentproto"}},
		{name: "zero", in: "github:a/b#0", wantErr: true},
		{name: "leading zero", in: "github:a/b#01", wantErr: true},
		{name: "number without repo", in: "github:a#3", wantErr: true},
		{name: "extra slash", in: "github:a/b/c", wantErr: true},
		{name: "not github", in: "gitlab:a/b", wantErr: true},
		{name: "dot owner", in: "github:./b", wantErr: true},
		{name: "dot-dot owner", in: "github:..", wantErr: true},
		{name: "dot-dot owner with repo", in: "github:../b#1", wantErr: true},
		{name: "dot repo", in: "github:a/.", wantErr: true},
		{name: "dot-dot repo", in: "github:a/..#2", wantErr: true},
		{name: "dotted names are fine", in: "github:a.b/.github", want: []string{"github:a.b/.github", "github:a.b"}},
		{name: "three dots is a name", in: "github:a/...", want: []string{"github:a/...", "github:a"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ref, err := sentinel.ParseGitHubSubject(tc.in)
			if tc.wantErr {
				require.ErrorIs(t, err, &sentinel.Error{Code: sentinel.CodeInvalidSubject})
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, ref.Subjects())
			require.Equal(t, tc.in, ref.Subject())
		})
	}
}

func TestParsePRURL(t *testing.T) {
	cases := []struct {
		in   string
		want string
	}{
		{"https://github.com/agentproto/ts/pull/1428", "github:agentproto/ts#1428"},
		{"github.com/agentproto/ts/pull/1428", "github:agentproto/ts#1428"},
		{"http://www.github.com/a/b/pull/7/files", "github:a/b#7"},
		{"https://github.com/a/b.js/pull/7?x=1", "github:a/b.js#7"},
		{"https://github.com/a/b/pull/7#discussion", "github:a/b#7"},
		{"https://github.com/a/b/issues/7", ""},
		{"https://gitlab.com/a/b/pull/7", ""},
		{"https://github.com/a/b/pull/0", ""},
		{"https://github.com/a/b/pull/7x", ""},
		{"https://github.com/../b/pull/7", ""},
		{"https://github.com/a/../pull/7", ""},
		{"https://github.com/./b/pull/7", ""},
		{"https://github.com/a/./pull/7", ""},
		{"https://github.com/a/.github/pull/7", "github:a/.github#7"},
		{"", ""},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			ref, err := sentinel.ParsePRURL(tc.in)
			if tc.want == "" {
				require.ErrorIs(t, err, &sentinel.Error{Code: sentinel.CodeInvalidPRURL})
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, ref.Subject())
		})
	}
}

func TestGlobMatch(t *testing.T) {
	cases := []struct {
		pattern, name string
		want          bool
	}{
		{"*", "github.pull_request.closed", true},
		{"github.pull_request.*", "github.pull_request.closed", true},
		{"github.pull_request.*", "github.pull_request_review.submitted", false},
		{"github.*.completed", "github.check_suite.completed", true},
		{"github.*.completed", "github.check_suite.requested", false},
		{"github.check_suite.completed", "github.check_suite.completed", true},
		{"*.closed", "github.pull_request.closed", true},
		{"a*b*c", "axxbyyc", true},
		{"a*b*c", "axxbyy", false},
		{"", "", true},
		{"", "x", false},
		{"a.b", "a.b", true},
		{"a.b", "aXb", false}, // '.' is literal, not a regexp dot
		{"**", "", true},
	}
	for _, tc := range cases {
		require.Equal(t, tc.want, sentinel.GlobMatch(tc.pattern, tc.name), "%q vs %q", tc.pattern, tc.name)
	}
}

func TestSpecMatchesORAcrossClauses(t *testing.T) {
	spec := sentinel.Spec{Match: []sentinel.Clause{
		{Subject: "github:acme/a#1", Types: []string{"github.pull_request.closed"}},
		{Subject: "github:acme/b*"},
	}}
	defaults := func(string) []string { return sentinel.DefaultPRTypes() }
	ev := func(subject, typ string) *sentinel.Event {
		ref, _ := sentinel.ParseGitHubSubject(subject)
		return &sentinel.Event{Subject: subject, Subjects: ref.Subjects(), Type: typ}
	}
	require.True(t, spec.Matches(ev("github:acme/a#1", "github.pull_request.closed"), defaults))
	require.False(t, spec.Matches(ev("github:acme/a#1", "github.check_suite.completed"), defaults), "clause 1 types exclude it")
	require.True(t, spec.Matches(ev("github:acme/b#9", "github.check_suite.completed"), defaults), "prefix clause with defaults")
	require.False(t, spec.Matches(ev("github:acme/b#9", "github.check_run.completed"), defaults), "check_run is not a default")
	require.True(t, spec.Matches(ev("github:acme/bee#2", "github.pull_request.closed"), defaults), "prefix is textual")
	require.False(t, spec.Matches(ev("github:acme/c#1", "github.pull_request.closed"), defaults))
	require.True(t, spec.Matches(&sentinel.Event{Subject: "github:acme/a#1", Type: "github.pull_request.closed"}, defaults), "no subjects falls back to subject")
}

func TestWatchRequestExpand(t *testing.T) {
	cases := []struct {
		name   string
		req    sentinel.WatchRequest
		caller string
		code   string
		check  func(t *testing.T, s sentinel.Spec)
	}{
		{name: "pr url sugar", req: sentinel.WatchRequest{PRURL: "https://github.com/agentproto/ts/pull/1428"}, caller: "sess_1", check: func(t *testing.T, s sentinel.Spec) {
			require.Equal(t, []sentinel.Clause{{Subject: "github:agentproto/ts#1428", Types: sentinel.DefaultPRTypes()}}, s.Match)
			require.Equal(t, sentinel.UntilSubjectTerminal, s.Until.Kind)
			require.Equal(t, sentinel.Target{Kind: "session", SessionID: "sess_1", Urgency: sentinel.UrgencyNextTurn}, s.Target)
		}},
		{name: "raw subject defaults to never", req: sentinel.WatchRequest{Subject: "github:a/b", SessionID: "s"}, check: func(t *testing.T, s sentinel.Spec) {
			require.Equal(t, sentinel.UntilNever, s.Until.Kind)
			require.Empty(t, s.Match[0].Types)
		}},
		{name: "explicit until closed alias", req: sentinel.WatchRequest{Subject: "github:a/b#1", SessionID: "s", Until: &sentinel.UntilArg{Until: sentinel.Until{Kind: sentinel.UntilKindAlias("closed")}}}, check: func(t *testing.T, s sentinel.Spec) {
			require.Equal(t, sentinel.UntilSubjectTerminal, s.Until.Kind)
		}},
		{name: "missing subject", req: sentinel.WatchRequest{SessionID: "s"}, code: sentinel.CodeMissingSubject},
		{name: "ambiguous", req: sentinel.WatchRequest{Subject: "github:a/b", PRURL: "https://github.com/a/b/pull/1", SessionID: "s"}, code: sentinel.CodeAmbiguousSubject},
		{name: "bad url", req: sentinel.WatchRequest{PRURL: "https://example.com/x", SessionID: "s"}, code: sentinel.CodeInvalidPRURL},
		{name: "no identity", req: sentinel.WatchRequest{Subject: "github:a/b"}, code: sentinel.CodeNoCallerIdentity},
		{name: "bad session id", req: sentinel.WatchRequest{Subject: "github:a/b", SessionID: "a.b"}, code: sentinel.CodeInvalidSessionID},
		{name: "bad urgency", req: sentinel.WatchRequest{Subject: "github:a/b", SessionID: "s", Urgency: "now"}, code: sentinel.CodeInvalidUrgency},
		{name: "bad until", req: sentinel.WatchRequest{Subject: "github:a/b", SessionID: "s", Until: &sentinel.UntilArg{Until: sentinel.Until{Kind: "soon"}}}, code: sentinel.CodeInvalidUntil},
		{name: "count needs n", req: sentinel.WatchRequest{Subject: "github:a/b", SessionID: "s", Until: &sentinel.UntilArg{Until: sentinel.Until{Kind: "count"}}}, code: sentinel.CodeInvalidUntil},
		{name: "bad subject", req: sentinel.WatchRequest{Subject: "nope", SessionID: "s"}, code: sentinel.CodeInvalidSubject},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := tc.req.Expand(tc.caller)
			if tc.code != "" {
				require.ErrorIs(t, err, &sentinel.Error{Code: tc.code})
				return
			}
			require.NoError(t, err)
			tc.check(t, s)
		})
	}
}

func TestTargetRejectsFrozenShapes(t *testing.T) {
	for _, kind := range []string{sentinel.TargetRoutine, sentinel.TargetWebhook} {
		err := sentinel.Target{Kind: kind}.Validate()
		require.ErrorIs(t, err, &sentinel.Error{Code: sentinel.CodeNotImplemented})
		require.Contains(t, err.Error(), "not_implemented")
	}
}

func TestIDs(t *testing.T) {
	id := sentinel.NewSentinelID()
	require.True(t, sentinel.ValidSentinelID(id), id)
	require.Len(t, id, 30)
	require.True(t, sentinel.ValidFollowID(sentinel.NewFollowID()))
	require.False(t, sentinel.ValidSentinelID("sen_x"))
	require.True(t, sentinel.ValidSessionID("sess_01J9-abc"))
	require.False(t, sentinel.ValidSessionID("a.b"))
	require.False(t, sentinel.ValidSessionID(""))
}

func TestRecordClosureAndTerminal(t *testing.T) {
	rec := sentinel.Sentinel{Spec: sentinel.Spec{Match: []sentinel.Clause{{Subject: "github:a/b#1"}, {Subject: "github:a/b#2"}}}}
	require.False(t, rec.AddTerminal([]string{"github:a/b#1"}))
	require.False(t, rec.AddTerminal([]string{"github:a/b#1"}))
	require.True(t, rec.AddTerminal([]string{"github:a/b#2"}))
	for i := 0; i < sentinel.MaxClosedSubjects+5; i++ {
		rec.MarkClosed("github:a/b#" + string(rune('A'+i%26)) + string(rune('a'+i/26%26)) + string(rune('0'+i/676)))
	}
	require.Len(t, rec.ClosedSubjects, sentinel.MaxClosedSubjects)
	v := rec.View()
	require.Equal(t, rec.Spec.Match, v.Match)
}
