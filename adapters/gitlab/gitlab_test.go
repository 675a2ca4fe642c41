package gitlab_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/adapters/gitlab"
	"github.com/agentproto/sentinel/adapters/gitlab/gitlabtest"
	"github.com/agentproto/sentinel/providers/adapter/kit"
)

const (
	token = "glpat-testtoken0123456789"
	proj  = "acme/tools/widgets"
	mr    = "gitlab:acme/tools/widgets!7"
)

// fixture is the adapter in-process against the fake GitLab.
type fixture struct {
	gl    *gitlabtest.Server
	a     kit.Adapter
	creds kit.Credentials
}

func newFixture(t *testing.T) *fixture {
	gl := gitlabtest.New(t, token)
	a := gitlab.New(gitlab.Config{HTTP: gl.Client(), Getenv: func(string) string { return "" },
		Now: func() time.Time { return time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC) }})
	return &fixture{gl: gl, a: a, creds: kit.Credentials{"token": token, "baseUrl": gl.URL}}
}

func (f *fixture) create(t *testing.T, subject string) kit.Handle {
	t.Helper()
	h, err := f.a.Create(context.Background(), kit.CreateParams{SentinelID: "sen_1", Match: []kit.Clause{{Subject: subject}}, Credentials: f.creds})
	require.NoError(t, err)
	return h
}

func (f *fixture) poll(t *testing.T, h kit.Handle) kit.PollResult {
	t.Helper()
	res, err := f.a.Poll(context.Background(), kit.PollParams{Handle: h, Limit: 50, Credentials: f.creds})
	require.NoError(t, err)
	for _, ev := range res.Events {
		require.NoError(t, ev.Validate())
	}
	return res
}

func types(evs []sentinel.Event) []string {
	out := []string{}
	for _, e := range evs {
		out = append(out, e.Type)
	}
	return out
}

func TestMergeRequestLifecycle(t *testing.T) {
	f := newFixture(t)
	f.gl.OpenMR(proj, 7, "Add sprockets", "aaaa1111", "bob")
	h := f.create(t, mr)
	require.Equal(t, mr, h.RemoteID)

	base := f.poll(t, h)
	require.Empty(t, base.Events, "the first poll sets the baseline")
	h.Cursor = base.Cursor

	f.gl.Note(proj, 7, "carol", "Looks good\nbut one nit", false)
	f.gl.Note(proj, 7, "gitlab", "added 1 commit", true)
	f.gl.Approve(proj, 7, "carol")
	f.gl.Pipeline(proj, 7, 0, "aaaa1111", "success")
	f.gl.Pipeline(proj, 7, 0, "aaaa1111", "running")
	res := f.poll(t, h)
	require.Equal(t, []string{"gitlab.note.created", "gitlab.approval.approved", "gitlab.pipeline.completed"}, types(res.Events))
	note := res.Events[0]
	require.Equal(t, mr, note.Subject)
	require.Equal(t, []string{mr, "gitlab:acme/tools/widgets"}, note.Subjects)
	require.Equal(t, "carol commented on !7: Looks good but one nit", note.Summary)
	require.Contains(t, string(res.Events[2].Data), `"conclusion":"success"`)

	again := f.poll(t, h)
	require.Equal(t, ids(res.Events), ids(again.Events), "a re-poll of the same cursor mints the same ids")

	// A quiet poll costs only 304s.
	h.Cursor = res.Cursor
	ok0, nm0 := f.gl.Counts()
	quiet := f.poll(t, h)
	require.Empty(t, quiet.Events)
	ok1, nm1 := f.gl.Counts()
	require.Equal(t, ok0, ok1, "no full answer for a quiet merge request")
	require.Equal(t, nm0+4, nm1, "four conditional requests answered 304")
	h.Cursor = quiet.Cursor

	// A new head: updated; its pipelines roll up worst-of.
	f.gl.Push(proj, 7, "bbbb2222")
	f.gl.Pipeline(proj, 7, 0, "bbbb2222", "success")
	f.gl.Pipeline(proj, 7, 0, "bbbb2222", "failed")
	f.gl.Unapprove(proj, 7, "carol")
	res = f.poll(t, h)
	require.Equal(t, []string{"gitlab.merge_request.updated", "gitlab.approval.revoked", "gitlab.pipeline.completed"}, types(res.Events))
	require.Contains(t, string(res.Events[2].Data), `"conclusion":"failure"`)
	h.Cursor = res.Cursor

	f.gl.Merge(proj, 7, "dave")
	res = f.poll(t, h)
	require.Equal(t, []string{"gitlab.merge_request.merged"}, types(res.Events))
	require.True(t, res.Events[0].Terminal)
	require.Equal(t, "!7 merged by dave: Add sprockets", res.Events[0].Summary)
}

func TestNotesBeyondTheLimitComeNextPoll(t *testing.T) {
	f := newFixture(t)
	f.gl.OpenMR(proj, 7, "t", "aaaa", "bob")
	h := f.create(t, mr)
	h.Cursor = f.poll(t, h).Cursor
	for range 5 {
		f.gl.Note(proj, 7, "carol", "hi", false)
	}
	res, err := f.a.Poll(context.Background(), kit.PollParams{Handle: h, Limit: 3, Credentials: f.creds})
	require.NoError(t, err)
	require.Len(t, res.Events, 3)
	h.Cursor = res.Cursor
	res, err = f.a.Poll(context.Background(), kit.PollParams{Handle: h, Limit: 3, Credentials: f.creds})
	require.NoError(t, err)
	require.Len(t, res.Events, 2, "the rest, not hidden by a 304")
}

func TestProjectWatch(t *testing.T) {
	f := newFixture(t)
	f.gl.OpenMR(proj, 1, "One", "a1", "bob")
	h := f.create(t, "gitlab:"+proj)
	h.Cursor = f.poll(t, h).Cursor
	f.gl.OpenMR(proj, 2, "Two", "b1", "erin")
	f.gl.CloseMR(proj, 1, "bob")
	res := f.poll(t, h)
	require.ElementsMatch(t, []string{"gitlab.merge_request.updated", "gitlab.merge_request.closed"}, types(res.Events))
	for _, ev := range res.Events {
		require.Contains(t, ev.Subjects, "gitlab:"+proj)
	}
}

func TestCredentialsAndBaseURL(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	cases := []struct {
		name   string
		fields kit.Credentials
		reason string
		want   string
	}{
		{"plain http is refused", kit.Credentials{"token": token, "baseUrl": "http://127.0.0.1:1"}, kit.ReasonSetup, "baseUrl must be https"},
		{"credentials in the URL are refused", kit.Credentials{"token": token, "baseUrl": "https://u:p@gitlab.example"}, kit.ReasonSetup, "must not carry credentials"},
		{"no token", kit.Credentials{"baseUrl": f.gl.URL}, kit.ReasonSetup, "no GitLab token"},
		{"a wrong token", kit.Credentials{"token": "glpat-wrongwrongwrongwrong", "baseUrl": f.gl.URL}, kit.ReasonAuth, "HTTP 401"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.a.Setup(ctx, kit.SetupParams{Fields: tc.fields})
			var ke *kit.Error
			require.ErrorAs(t, err, &ke)
			require.Equal(t, tc.reason, ke.Reason)
			require.Contains(t, ke.Message, tc.want)
			require.NotContains(t, ke.Message, "glpat-")
		})
	}
	res, err := f.a.Setup(ctx, kit.SetupParams{Fields: f.creds})
	require.NoError(t, err)
	require.True(t, res.Readiness.Ready)

	env := gitlab.New(gitlab.Config{HTTP: f.gl.Client(), Getenv: func(k string) string {
		if k == "GITLAB_TOKEN" {
			return token
		}
		return ""
	}})
	r, err := env.Readiness(ctx, kit.ReadinessParams{Credentials: kit.Credentials{"baseUrl": f.gl.URL}})
	require.NoError(t, err)
	require.True(t, r.Ready)
	require.Equal(t, "GITLAB_TOKEN", r.CredentialSource)
}

func TestParseSubject(t *testing.T) {
	cases := []struct {
		in   string
		want gitlab.Ref
		bad  bool
	}{
		{in: "gitlab:g/p!12", want: gitlab.Ref{Project: "g/p", IID: 12}},
		{in: "gitlab:g/sub/p", want: gitlab.Ref{Project: "g/sub/p"}},
		{in: "gitlab:p", bad: true},
		{in: "gitlab:g/../p", bad: true},
		{in: "gitlab:g/p!0", bad: true},
		{in: "gitlab:g/p!07", bad: true},
		{in: "github:g/p", bad: true},
		{in: "gitlab:g/-p", bad: true},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			got, err := gitlab.ParseSubject(tc.in)
			if tc.bad {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
			require.Equal(t, tc.in, got.Subject())
		})
	}
}

func ids(evs []sentinel.Event) []string {
	out := []string{}
	for _, e := range evs {
		out = append(out, e.ID)
	}
	return out
}
