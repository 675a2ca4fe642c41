package webhook

import (
	"net/http"
	"regexp"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/github/githubtest"
)

func TestCreateConcurrentSharesOneHook(t *testing.T) {
	h := newHarness(t, githubtest.Options{})
	nodes := []*Provider{h.provider("node-a"), h.provider("node-b")}
	subjects := []string{"github:acme/widgets#1", "github:acme/widgets*", "github:acme/widgets", "github:Acme/Widgets#2", "github:acme/widgets#3", "github:acme/widgets"}
	handles := make([]sentinel.Handle, len(subjects))
	var wg sync.WaitGroup
	for i, s := range subjects {
		wg.Add(1)
		go func() {
			defer wg.Done()
			hd, err := nodes[i%2].Create(ctxT(t), providers.CreateRequest{SentinelID: sentinel.NewSentinelID(), Spec: spec(s)})
			h.seen(err)
			require.NoError(t, err)
			h.seen(hd)
			handles[i] = hd
		}()
	}
	wg.Wait()

	hook := h.liveHook(testRepo)
	require.Equal(t, 1, h.gh.Count(http.MethodPost, "/repos/acme/widgets/hooks"), "one hook created")
	rec := h.record(testRepo)
	require.Len(t, rec.Holders, len(subjects))
	holders := map[string]bool{}
	for _, hd := range handles {
		require.Equal(t, Slug, hd.Provider)
		require.Equal(t, strconv.FormatInt(hook.ID, 10), hd.RemoteID)
		require.Equal(t, rec.Key, hd.StateString("hookKey"))
		require.Regexp(t, `^wh_[0-9a-f]{16}$`, hd.StateString("holder"))
		require.True(t, rec.holds(hd.StateString("holder")))
		holders[hd.StateString("holder")] = true
		require.Len(t, hd.State, 3, "handle state is exactly repo, hookKey, holder")
	}
	require.Len(t, holders, len(subjects))

	require.Regexp(t, `^[0-9a-f]{32}$`, rec.Key)
	require.Regexp(t, `^[0-9a-f]{64}$`, rec.Secret)
	require.Equal(t, rec.Secret, hook.Secret, "the fake got the record's secret")
	require.Equal(t, "https://sentinel.example.test/inbound/sentinel-"+rec.Key, hook.URL)
	require.Equal(t, "json", hook.ContentType)
	require.True(t, hook.Active)
	require.Equal(t, []string{"pull_request", "pull_request_review", "check_suite", "workflow_run", "issue_comment", "status"}, hook.Events, "the default types need the spec's five events and status")
	require.Equal(t, hook.ID, rec.HookID)
	require.Equal(t, "https://sentinel.example.test", rec.Origin)
	h.gh.Verify(t)
}

func TestCancelOrderAndDoubleCancel(t *testing.T) {
	h := newHarness(t, githubtest.Options{})
	p := h.provider("node-a")
	a := h.create(p, "github:acme/widgets#1")
	b := h.create(p, "github:acme/widgets*")
	ctx := ctxT(t)

	// A sibling's double cancel (expiry plus unwatch) must not drop b's hook.
	require.NoError(t, p.Cancel(ctx, a))
	require.NoError(t, p.Cancel(ctx, a))
	h.liveHook(testRepo)
	require.Equal(t, []string{b.StateString("holder")}, h.record(testRepo).Holders)
	require.Zero(t, h.gh.Count(http.MethodDelete, "/repos/"))

	require.NoError(t, p.Cancel(ctx, b))
	require.Empty(t, h.gh.Hooks(testRepo), "the last holder deletes the hook")
	require.Nil(t, h.record(testRepo), "and the record")
	rec, err := p.store().byKey(ctx, a.StateString("hookKey"))
	require.NoError(t, err)
	require.Nil(t, rec, "and the route")

	h.gh.ResetLog()
	require.NoError(t, p.Cancel(ctx, b), "cancel is idempotent")
	require.NoError(t, p.Cancel(ctx, sentinel.Handle{Provider: Slug}), "an empty handle is a no-op")
	require.Empty(t, h.gh.Requests(), "no gh call for a gone record")
	h.gh.Verify(t)
}

func TestCancelHookAlreadyDeleted(t *testing.T) {
	h := newHarness(t, githubtest.Options{})
	p := h.provider("node-a")
	a := h.create(p, "github:acme/widgets")
	h.gh.DeleteHook(testRepo, h.liveHook(testRepo).ID)
	require.NoError(t, p.Cancel(ctxT(t), a), "a 404 on delete counts as gone")
	require.Nil(t, h.record(testRepo))
}

func TestCancelDeleteFailureKeepsRecord(t *testing.T) {
	h := newHarness(t, githubtest.Options{})
	p := h.provider("node-a")
	a := h.create(p, "github:acme/widgets")
	hook := h.liveHook(testRepo)
	h.gh.Inject(githubtest.Fault{Method: http.MethodDelete, Path: "/repos/acme/widgets/hooks/", Status: http.StatusBadGateway, Times: 1})
	err := p.Cancel(ctxT(t), a)
	h.seen(err)
	require.Error(t, err)
	rec := h.record(testRepo)
	require.NotNil(t, rec, "a failed delete keeps the record")
	require.Empty(t, rec.Holders)

	// A later create on the repository reuses the hook.
	b := h.create(p, "github:acme/widgets#4")
	require.Equal(t, strconv.FormatInt(hook.ID, 10), b.RemoteID)
	require.Equal(t, rec.Key, b.StateString("hookKey"))
	require.Equal(t, 1, h.gh.Count(http.MethodPost, "/repos/acme/widgets/hooks"))
	require.Equal(t, []string{b.StateString("holder")}, h.record(testRepo).Holders)
}

func TestAttachRecreatesDeletedHook(t *testing.T) {
	h := newHarness(t, githubtest.Options{})
	p := h.provider("node-a")
	a := h.create(p, "github:acme/widgets#1")
	b := h.create(p, "github:acme/widgets")
	before := h.record(testRepo)
	h.gh.DeleteHook(testRepo, before.HookID)

	// A fresh node (no in-process memory) re-attaches at boot.
	q := h.provider("node-b")
	got, err := q.Attach(ctxT(t), a, providers.Delivery{Mode: providers.ModePush})
	h.seen(err)
	require.NoError(t, err)
	h.seen(got)
	hook := h.liveHook(testRepo)
	after := h.record(testRepo)
	require.NotEqual(t, before.HookID, after.HookID)
	require.Equal(t, strconv.FormatInt(after.HookID, 10), got.RemoteID)
	require.Equal(t, before.Key, after.Key, "the route key is kept")
	require.Equal(t, before.Key, got.StateString("hookKey"))
	require.ElementsMatch(t, before.Holders, after.Holders, "the holders are kept")
	require.NotEqual(t, before.Secret, after.Secret, "a new secret")
	require.Equal(t, after.Secret, hook.Secret)
	require.Equal(t, "https://sentinel.example.test/inbound/sentinel-"+before.Key, hook.URL)

	// The sibling re-attaches without another hook.
	got, err = q.Attach(ctxT(t), b, providers.Delivery{Mode: providers.ModePush})
	require.NoError(t, err)
	require.Equal(t, strconv.FormatInt(after.HookID, 10), got.RemoteID)
	require.Len(t, h.gh.Hooks(testRepo), 1)
}

func TestAttachRepointsOnceOnURLChange(t *testing.T) {
	h := newHarness(t, githubtest.Options{})
	p := h.provider("node-a")
	handles := []sentinel.Handle{h.create(p, "github:acme/widgets#1"), h.create(p, "github:acme/widgets#2"), h.create(p, "github:acme/widgets")}
	before := h.record(testRepo)

	h.setURL("https://moved.example.test/")
	h.gh.ResetLog()
	q := h.provider("node-b")
	for _, hd := range handles {
		got, err := q.Attach(ctxT(t), hd, providers.Delivery{Mode: providers.ModePush})
		h.seen(err)
		require.NoError(t, err)
		require.Equal(t, hd, got)
	}
	require.Equal(t, 1, h.gh.Count(http.MethodPatch, "/repos/acme/widgets/hooks/"), "several sentinels re-point once")
	require.Zero(t, h.gh.Count(http.MethodPost, "/repos/"))
	hook := h.liveHook(testRepo)
	after := h.record(testRepo)
	require.Equal(t, "https://moved.example.test/inbound/sentinel-"+before.Key, hook.URL)
	require.Equal(t, before.Secret, hook.Secret, "re-pointing keeps the secret")
	require.Equal(t, before.Key, after.Key)
	require.Equal(t, before.Secret, after.Secret)
	require.Equal(t, "https://moved.example.test", after.Origin)

	st, err := q.Status(ctxT(t), handles[0])
	require.NoError(t, err)
	require.True(t, st.OK, st.Detail)
}

func TestAttachTolerant(t *testing.T) {
	h := newHarness(t, githubtest.Options{})
	p := h.provider("node-a")
	a := h.create(p, "github:acme/widgets#1")
	ctx := ctxT(t)

	h.gh.ResetLog()
	h.setURL("")
	got, err := p.Attach(ctx, a, providers.Delivery{Mode: providers.ModePush})
	require.NoError(t, err, "a missing public URL is tolerated")
	require.Equal(t, a, got)
	partial := sentinel.Handle{Provider: Slug, State: map[string]any{"repo": testRepo}}
	h.setURL("https://sentinel.example.test")
	got, err = p.Attach(ctx, partial, providers.Delivery{})
	require.NoError(t, err)
	require.Equal(t, partial, got)
	require.Empty(t, h.gh.Requests(), "no gh call")

	// A gh failure other than 404 is tolerated and changes nothing.
	q := h.provider("node-b")
	h.gh.ServerErrors("/repos/acme/widgets/hooks/", 1)
	got, err = q.Attach(ctx, a, providers.Delivery{})
	require.NoError(t, err)
	require.Equal(t, a, got)
	h.liveHook(testRepo)

	// A holder the record lost is registered again.
	rec := h.record(testRepo)
	rec.Holders = []string{}
	_, rev, err := p.store().load(ctx, testRepo)
	require.NoError(t, err)
	_, err = p.store().save(ctx, rec, rev)
	require.NoError(t, err)
	_, err = q.Attach(ctx, a, providers.Delivery{})
	require.NoError(t, err)
	require.Equal(t, []string{a.StateString("holder")}, h.record(testRepo).Holders)
	require.Len(t, h.gh.Hooks(testRepo), 1)
}

func TestAttachAdoptsHookAfterStoreLoss(t *testing.T) {
	h := newHarness(t, githubtest.Options{})
	p := h.provider("node-a")
	a := h.create(p, "github:acme/widgets#1")
	old := h.record(testRepo)
	require.NoError(t, p.store().remove(ctxT(t), old), "the store is wiped")

	// GitHub refuses a second hook with the same URL; the provider adopts
	// the existing one and gives it a new secret.
	h.gh.Inject(githubtest.Fault{Method: http.MethodPost, Path: "/repos/acme/widgets/hooks", Status: http.StatusUnprocessableEntity, Times: 1,
		Body: `{"message":"Validation Failed","errors":[{"resource":"Hook","code":"custom","message":"Hook already exists on this repository"}]}`})
	got, err := p.Attach(ctxT(t), a, providers.Delivery{})
	require.NoError(t, err)
	rec := h.record(testRepo)
	hook := h.liveHook(testRepo)
	require.Equal(t, old.HookID, rec.HookID)
	require.Equal(t, old.Key, rec.Key)
	require.Equal(t, rec.Secret, hook.Secret)
	require.NotEqual(t, old.Secret, rec.Secret)
	require.Equal(t, a, got)
	require.Equal(t, []string{a.StateString("holder")}, rec.Holders)
}

func TestCreateSetupErrors(t *testing.T) {
	h := newHarness(t, githubtest.Options{})
	p := h.provider("node-a")
	ctx := ctxT(t)
	create := func(subjects ...string) error {
		_, err := p.Create(ctx, providers.CreateRequest{SentinelID: sentinel.NewSentinelID(), Spec: spec(subjects...)})
		h.seen(err)
		return err
	}

	tests := []struct {
		name     string
		subjects []string
		is       error
	}{
		{"owner only", []string{"github:acme"}, ErrUnsupportedSubject},
		{"owner prefix", []string{"github:acme*"}, ErrUnsupportedSubject},
		{"pr prefix", []string{"github:acme/widgets#1*"}, ErrUnsupportedSubject},
		{"other scheme", []string{"session:abc"}, ErrUnsupportedSubject},
		{"bad number", []string{"github:acme/widgets#0"}, ErrUnsupportedSubject},
		{"two repositories", []string{"github:acme/widgets#1", "github:acme/gadgets#2"}, ErrSeveralRepositories},
		{"no clause", nil, ErrUnsupportedSubject},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := create(tt.subjects...)
			require.ErrorIs(t, err, tt.is)
			require.Equal(t, providers.ReasonInvalid, providers.ReasonOf(err))
		})
	}
	require.Empty(t, h.gh.Requests(), "no gh call for a refused spec")

	h.setURL("")
	err := create("github:acme/widgets#1")
	require.Equal(t, providers.ReasonSetup, providers.ReasonOf(err))
	require.True(t, containsAll(err.Error(), "AGENTPROTO_PUBLIC_URL", "named tunnel"), err.Error())
	require.Empty(t, h.gh.Requests(), "no gh call without a public URL")

	// A plain-http public URL off loopback: GitHub would send the
	// deliveries in clear. Refused, naming the opt-in, with no gh call.
	h.setURL("http://sentinel.example.test")
	err = create("github:acme/widgets#1")
	require.Equal(t, providers.ReasonSetup, providers.ReasonOf(err))
	require.True(t, containsAll(err.Error(), "plain http", "public_url_allow_http", "AGENTPROTO_PUBLIC_URL_ALLOW_HTTP"), err.Error())
	require.Empty(t, h.gh.Requests(), "no gh call with a refused public URL")
	// Attach is tolerant: the handle is kept and no hook is re-pointed.
	old := handleFor(&hookRecord{Key: newRouteKey(), Repo: testRepo, HookID: 1}, "wh_x")
	got, err := p.Attach(ctx, old, providers.Delivery{})
	require.NoError(t, err)
	require.Equal(t, old, got)
	require.Empty(t, h.gh.Requests(), "attach makes no gh call with a refused public URL")

	h.setURL("https://sentinel.example.test")
	err = create("github:acme/unknown#1") // the fake answers 404
	require.Equal(t, providers.ReasonSetup, providers.ReasonOf(err), err)
	require.True(t, containsAll(err.Error(), "admin:repo_hook", ScopeFix, "acme/unknown"), err.Error())

	h.gh.Inject(githubtest.Fault{Method: http.MethodPost, Path: "/repos/acme/widgets/hooks", Status: http.StatusForbidden, Times: 1,
		Body: `{"message":"Resource not accessible by integration"}`})
	err = create("github:acme/widgets#1")
	require.Equal(t, providers.ReasonSetup, providers.ReasonOf(err), err)
	require.Contains(t, err.Error(), ScopeFix)
	require.Nil(t, h.record(testRepo))
	require.Empty(t, h.gh.Hooks(testRepo))
}

func TestDefaultTypesAndCapabilities(t *testing.T) {
	p := &Provider{}
	for _, s := range []string{"github:o/r", "github:o/r*", "github:o/r#3"} {
		require.Equal(t, sentinel.DefaultPRTypes(), p.DefaultTypes(s), s)
	}
	for _, s := range []string{"github:o", "github:o*", "github:o/r#3*", "session:x", ""} {
		require.Empty(t, p.DefaultTypes(s), s)
		require.NotNil(t, p.DefaultTypes(s), s)
	}
	c := p.Capabilities()
	require.Equal(t, providers.Capabilities{Subjects: []string{"github"}, Push: true, NeedsPublicURL: true, TypicalLatencyMs: 2000}, c)
	require.Equal(t, Slug, p.Info().Slug)
	_, err := New(Config{})
	require.Error(t, err)
}

var hex64 = regexp.MustCompile(`[0-9a-f]{64}`)

func TestHandleNeverCarriesSecret(t *testing.T) {
	rec := &hookRecord{Key: "0123456789abcdef0123456789abcdef", Repo: "o/r", HookID: 7, Secret: newSecret()}
	hd := handleFor(rec, "wh_0011223344556677")
	require.Equal(t, sentinel.Handle{Provider: Slug, RemoteID: "7", State: map[string]any{"repo": "o/r", "hookKey": rec.Key, "holder": "wh_0011223344556677"}}, hd)
	require.False(t, hex64.MatchString(hd.RemoteID+hd.StateString("hookKey")+hd.StateString("holder")))
}

func TestRetriedCancelDeletesAnUnheldHook(t *testing.T) {
	h := newHarness(t, githubtest.Options{})
	p := h.provider("node-a")
	a := h.create(p, "github:acme/widgets")
	h.liveHook(testRepo)
	h.gh.Inject(githubtest.Fault{Method: http.MethodDelete, Path: "/repos/acme/widgets/hooks/", Status: http.StatusBadGateway, Times: 1})
	err := p.Cancel(ctxT(t), a)
	h.seen(err)
	require.Error(t, err)
	// The runtime retries the cancel (a tombstone): the delete goes through.
	require.NoError(t, p.Cancel(ctxT(t), a))
	require.Equal(t, 2, h.gh.Count(http.MethodDelete, "/repos/acme/widgets/hooks/"))
	require.Nil(t, h.record(testRepo), "the record goes with the hook")
	require.NoError(t, p.Cancel(ctxT(t), a), "and a third cancel is a no-op")
	require.Equal(t, 2, h.gh.Count(http.MethodDelete, "/repos/acme/widgets/hooks/"))
}
