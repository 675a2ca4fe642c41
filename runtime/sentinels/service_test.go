package sentinels_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/fake"
	"github.com/agentproto/sentinel/runtime/runtimetest"
	"github.com/agentproto/sentinel/runtime/sentinels"
)

// shaped is a fake provider with overridden capabilities and setup fields.
type shaped struct {
	*fake.Provider
	needsURL bool
	subjects []string
	fields   []providers.SetupField
}

func (s *shaped) Capabilities() providers.Capabilities {
	c := s.Provider.Capabilities()
	c.NeedsPublicURL = s.needsURL
	if s.subjects != nil {
		c.Subjects = s.subjects
	}
	return c
}

func (s *shaped) SetupFields() []providers.SetupField { return s.fields }

func newShaped(slug string) *shaped { return &shaped{Provider: fake.New(fake.Config{Slug: slug})} }

func req(provider string) sentinel.WatchRequest {
	return sentinel.WatchRequest{SessionID: "s1", PRURL: "https://github.com/acme/widgets/pull/7", Provider: provider}
}

func codeOf(t *testing.T, err error) string {
	t.Helper()
	var de *sentinel.Error
	require.True(t, errors.As(err, &de), "not a domain error: %v", err)
	return de.Code
}

func TestCreateMintsIDBeforeProviderCreate(t *testing.T) {
	e := runtimetest.Start(t, runtimetest.Options{NoWorkers: true})
	rec := e.Watch(req("fake"))
	require.True(t, sentinel.ValidSentinelID(rec.ID))
	require.Equal(t, "fake-"+rec.ID, rec.Handle.RemoteID, "the provider saw the minted id")
	require.Equal(t, sentinel.StatusActive, rec.Status)
	require.Equal(t, "fake", rec.Provider)
}

func TestCreateErrors(t *testing.T) {
	e := runtimetest.Start(t, runtimetest.Options{NoWorkers: true})
	ctx := context.Background()
	_, err := e.Service.Create(ctx, req("nope"), "")
	require.Equal(t, sentinel.CodeUnknownProvider, codeOf(t, err))

	e.Fake.SetNotReady("run the fake setup")
	_, err = e.Service.Create(ctx, req("fake"), "")
	require.Equal(t, sentinel.CodeProviderCreateFail, codeOf(t, err))
	require.Contains(t, err.Error(), "run the fake setup", "an explicit not-ready provider fails with its own setup error")
	e.Fake.SetNotReady("")

	e.Fake.FailCreate(errors.New("repository not accessible: run gh auth refresh"))
	_, err = e.Service.Create(ctx, req("fake"), "")
	require.Equal(t, sentinel.CodeProviderCreateFail, codeOf(t, err))
	require.Contains(t, err.Error(), "gh auth refresh")
	e.Fake.FailCreate(nil)
	recs, err := e.Service.List(ctx)
	require.NoError(t, err)
	require.Empty(t, recs, "a failed provider create stores nothing")

	_, err = e.Service.Create(ctx, sentinel.WatchRequest{PRURL: "https://github.com/a/b/pull/1"}, "")
	require.Equal(t, sentinel.CodeNoCallerIdentity, codeOf(t, err))
	rec, err := e.Service.Create(ctx, sentinel.WatchRequest{PRURL: "https://github.com/a/b/pull/1", Provider: "fake"}, "caller-session")
	require.NoError(t, err)
	require.Equal(t, "caller-session", rec.Spec.Target.SessionID, "sessionId defaults to the caller")
}

type deadSessions struct{}

func (deadSessions) CheckTarget(_ context.Context, id string) error {
	if id == "gone" {
		return sentinel.Errorf(sentinel.CodeSessionNotAlive, "session %s has ended (operator-completed)", id)
	}
	return nil
}

func TestCreateRefusesEndedSession(t *testing.T) {
	e := runtimetest.Start(t, runtimetest.Options{NoWorkers: true, Service: []sentinels.Option{sentinels.WithSessions(deadSessions{})}})
	_, err := e.Service.Create(context.Background(), sentinel.WatchRequest{SessionID: "gone", Subject: "github:a/b#1", Provider: "fake"}, "")
	require.Equal(t, sentinel.CodeSessionNotAlive, codeOf(t, err))
}

func TestAutoSelection(t *testing.T) {
	cases := []struct {
		name      string
		publicURL providers.PublicURL
		notReady  []string
		want      string
	}{
		{name: "agentpush when ready", want: "agentpush"},
		{name: "webhook on a stable URL", publicURL: providers.PublicURL{URL: "https://x.example", Stable: true}, notReady: []string{"agentpush"}, want: "webhook"},
		{name: "local-gh on an unstable URL", publicURL: providers.PublicURL{URL: "https://x.trycloudflare.com"}, notReady: []string{"agentpush"}, want: "local-gh"},
		{name: "local-gh without a URL", notReady: []string{"agentpush"}, want: "local-gh"},
		{name: "local-gh when webhook is not ready", publicURL: providers.PublicURL{URL: "https://x.example", Stable: true}, notReady: []string{"agentpush", "webhook"}, want: "local-gh"},
		{name: "local-gh even when nothing is ready", notReady: []string{"agentpush", "webhook", "local-gh"}, want: "local-gh"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ap, wh, lg := newShaped("agentpush"), newShaped("webhook"), newShaped("local-gh")
			wh.needsURL = true
			lg.subjects = []string{"github"}
			byName := map[string]*shaped{"agentpush": ap, "webhook": wh, "local-gh": lg}
			for _, n := range tc.notReady {
				byName[n].SetNotReady("not set up")
			}
			e := runtimetest.Start(t, runtimetest.Options{NoWorkers: true, Extra: []providers.Provider{lg, wh, ap},
				Service: []sentinels.Option{sentinels.WithPublicURL(func() providers.PublicURL { return tc.publicURL })}})
			rec, err := e.Service.Create(context.Background(), req(""), "")
			require.NoError(t, err)
			require.Equal(t, tc.want, rec.Provider)
			require.Empty(t, rec.Spec.Provider, "the spec keeps the caller's choice (none)")
		})
	}
}

func TestRemoveCancelsBestEffort(t *testing.T) {
	e := runtimetest.Start(t, runtimetest.Options{NoWorkers: true})
	ctx := context.Background()
	rec := e.Watch(req("fake"))
	e.Fake.FailCancel(errors.New("remote unreachable"))
	require.NoError(t, e.Service.Remove(ctx, rec.ID), "a failing cancel never blocks removal")
	require.Contains(t, e.Fake.Cancels(), rec.Handle.RemoteID)
	_, err := e.Service.Get(ctx, rec.ID)
	require.Equal(t, sentinel.CodeSentinelNotFound, codeOf(t, err))
	require.Equal(t, sentinel.CodeSentinelNotFound, codeOf(t, e.Service.Remove(ctx, rec.ID)))
}

func TestReattachMarksErrors(t *testing.T) {
	broken := newShaped("broken")
	e := runtimetest.Start(t, runtimetest.Options{NoWorkers: true, Extra: []providers.Provider{broken}})
	ctx := context.Background()
	ok := e.Watch(req("fake"))
	bad := e.Watch(req("broken"))
	gone := e.Watch(req("fake"))
	_, err := e.Store.Update(ctx, gone.ID, func(r *sentinel.Sentinel) error { r.Provider = "uninstalled"; return nil })
	require.NoError(t, err)
	broken.FailAttach(errors.New("subscription deleted: re-create the sentinel"))
	e.Service.Reattach(ctx)
	require.Equal(t, sentinel.StatusActive, e.Get(ok.ID).Status)
	require.Equal(t, sentinel.StatusError, e.Get(bad.ID).Status)
	require.Contains(t, e.Get(bad.ID).LastError, "re-create the sentinel")
	require.Equal(t, sentinel.StatusError, e.Get(gone.ID).Status)
	require.Contains(t, e.Get(gone.ID).LastError, `unknown sentinel provider "uninstalled"`)
}

func TestSetupStoresWithoutEchoing(t *testing.T) {
	p := newShaped("hosted")
	p.fields = []providers.SetupField{{Name: "apiKey", Required: true, Sensitive: true}, {Name: "baseUrl"}}
	e := runtimetest.Start(t, runtimetest.Options{NoWorkers: true, Extra: []providers.Provider{p}})
	ctx := context.Background()
	_, err := e.Service.Setup(ctx, "nope", nil)
	require.Equal(t, sentinel.CodeProviderNotFound, codeOf(t, err))
	_, err = e.Service.Setup(ctx, "fake", map[string]string{"x": "y"})
	require.Equal(t, sentinel.CodeInvalidSetup, codeOf(t, err), "a provider without setup fields")
	_, err = e.Service.Setup(ctx, "hosted", map[string]string{"baseUrl": "https://h"})
	require.Equal(t, sentinel.CodeInvalidSetup, codeOf(t, err), "missing required apiKey")
	_, err = e.Service.Setup(ctx, "hosted", map[string]string{"apiKey": "k", "bogus": "1"})
	require.Equal(t, sentinel.CodeInvalidSetup, codeOf(t, err))
	res, err := e.Service.Setup(ctx, "hosted", map[string]string{"apiKey": "sk_live_SECRET", "baseUrl": "https://h"})
	require.NoError(t, err)
	require.Equal(t, []string{"apiKey", "baseUrl"}, res.Stored)
	require.NotContains(t, strings.Join(res.Stored, ","), "sk_live_SECRET")
	creds, err := e.Creds.Credentials(ctx, "hosted")
	require.NoError(t, err)
	require.Equal(t, "sk_live_SECRET", creds["apiKey"])
	// A later setup that omits the key keeps it.
	_, err = e.Service.Setup(ctx, "hosted", map[string]string{"baseUrl": "https://h2"})
	require.NoError(t, err)
	creds, _ = e.Creds.Credentials(ctx, "hosted")
	require.Equal(t, "sk_live_SECRET", creds["apiKey"])
	for _, a := range e.Service.Adapters(ctx) {
		require.NotContains(t, strings.ToLower(strings.Join([]string{a.Slug, a.Name, a.Description}, " ")), "sk_live")
	}
}

func TestAdaptersNeverFalseReady(t *testing.T) {
	e := runtimetest.Start(t, runtimetest.Options{NoWorkers: true})
	e.Fake.SetNotReady("install the thing")
	as := e.Service.Adapters(context.Background())
	require.Len(t, as, 1)
	require.Equal(t, sentinels.AdapterAvailable, as[0].Status)
	require.Equal(t, providers.Readiness{Ready: false, Reason: "install the thing"}, as[0].Info["readiness"])
}

func TestNormalizeOrigin(t *testing.T) {
	cases := []struct{ in, want, err string }{
		{in: "https://Sentinel.Example.com/", want: "https://sentinel.example.com"},
		{in: "http://127.0.0.1:8080", want: "http://127.0.0.1:8080"},
		{in: "", want: ""},
		{in: "ftp://x", err: "http or https"},
		{in: "https://u:p@x", err: "credentials"},
		{in: "https://x/?a=1", err: "query"},
		{in: "https://x/#f", err: "fragment"},
		{in: "https://x/hooks", err: "origin"},
		{in: "x.example", err: "http or https"},
	}
	for _, tc := range cases {
		got, err := sentinels.NormalizeOrigin(tc.in)
		if tc.err != "" {
			require.ErrorContains(t, err, tc.err, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.want, got)
	}
}

func TestStatusReportsProviderHealth(t *testing.T) {
	e := runtimetest.Start(t, runtimetest.Options{NoWorkers: true})
	ctx := context.Background()
	rec := e.Watch(req("fake"))
	st, err := e.Service.Status(ctx, rec.ID)
	require.NoError(t, err)
	require.True(t, st.OK)
	e.Fake.FailPoll(errors.New("HTTP 502 from upstream"))
	st, err = e.Service.Status(ctx, rec.ID)
	require.NoError(t, err)
	require.False(t, st.OK)
	require.Contains(t, st.Detail, "502")
	_, err = e.Service.Status(ctx, "sen_01JAB2C3D4E5F6G7H8J9K0L1M2")
	require.Equal(t, sentinel.CodeSentinelNotFound, codeOf(t, err))
}

func TestFailedCancelIsRetriedUntilItSucceeds(t *testing.T) {
	e := runtimetest.Start(t, runtimetest.Options{NoWorkers: true})
	ctx := context.Background()
	rec := e.Watch(req("fake"))
	e.Fake.FailCancel(errors.New("agentpush unreachable"))
	require.NoError(t, e.Service.Remove(ctx, rec.ID), "removal never waits for the remote")
	ts, err := e.Expirer.Tombstones().List(ctx)
	require.NoError(t, err)
	require.Len(t, ts, 1)
	require.Equal(t, rec.Handle.RemoteID, ts[0].Handle.RemoteID)
	require.Contains(t, ts[0].LastError, "unreachable")

	e.Loop.PollNow(ctx) // not due yet: no retry
	require.Len(t, e.Fake.Cancels(), 1)
	e.Clock.Advance(sentinels.TombstoneBase)
	e.Loop.PollNow(ctx) // due, still failing: backs off
	require.Len(t, e.Fake.Cancels(), 2)
	ts, _ = e.Expirer.Tombstones().List(ctx)
	require.Equal(t, 2, ts[0].Attempts)
	e.Fake.FailCancel(nil)
	e.Clock.Advance(2 * sentinels.TombstoneBase)
	e.Loop.PollNow(ctx)
	require.Len(t, e.Fake.Cancels(), 3)
	ts, _ = e.Expirer.Tombstones().List(ctx)
	require.Empty(t, ts, "a successful retry drops the tombstone")
}

func TestTombstoneOfARemoteInUseAgainIsDropped(t *testing.T) {
	e := runtimetest.Start(t, runtimetest.Options{NoWorkers: true})
	ctx := context.Background()
	rec := e.Watch(req("fake"))
	e.Fake.FailCancel(errors.New("timeout"))
	// A tombstone an earlier sentinel left for the remote rec now owns.
	require.NoError(t, e.Expirer.Tombstones().Add(ctx, sentinel.NewSentinelID(), "fake", rec.Handle, errors.New("timeout")))
	e.Clock.Advance(sentinels.TombstoneBase)
	e.Loop.PollNow(ctx)
	require.Empty(t, e.Fake.Cancels(), "a remote a live sentinel owns is never cancelled by a stale tombstone")
	ts, _ := e.Expirer.Tombstones().List(ctx)
	require.Empty(t, ts)
}
