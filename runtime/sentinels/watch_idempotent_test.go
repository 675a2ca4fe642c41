package sentinels_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/runtime/runtimetest"
	"github.com/agentproto/sentinel/runtime/sentinels"
)

func watchOf(session, subject string) sentinel.WatchRequest {
	return sentinel.WatchRequest{SessionID: session, Subject: subject, Types: []string{"*"}, Provider: "fake"}
}

func countActive(t *testing.T, e *runtimetest.Env) int {
	t.Helper()
	recs, err := e.Service.List(context.Background())
	require.NoError(t, err)
	n := 0
	for _, r := range recs {
		if r.Status.Pollable() {
			n++
		}
	}
	return n
}

func TestWatchTwiceReturnsTheExistingSentinel(t *testing.T) {
	e := runtimetest.Start(t, runtimetest.Options{NoWorkers: true})
	ctx := context.Background()
	first, err := e.Service.Watch(ctx, watchOf("s1", "github:acme/widgets#7"), "")
	require.NoError(t, err)
	require.False(t, first.Existing)

	again, err := e.Service.Watch(ctx, watchOf("s1", "github:acme/widgets#7"), "")
	require.NoError(t, err)
	require.True(t, again.Existing)
	require.Equal(t, first.Sentinel.ID, again.Sentinel.ID)
	creates, _, _ := e.Fake.Counts()
	require.Equal(t, 1, creates, "the provider is asked once")

	// Another urgency, another until, other types or another session is
	// another watch.
	other := []sentinel.WatchRequest{watchOf("s2", "github:acme/widgets#7")}
	r := watchOf("s1", "github:acme/widgets#7")
	r.Urgency = sentinel.UrgencyInterrupt
	other = append(other, r)
	r = watchOf("s1", "github:acme/widgets#7")
	r.Until = &sentinel.UntilArg{Until: sentinel.Until{Kind: sentinel.UntilSubjectTerminal}}
	other = append(other, r)
	r = watchOf("s1", "github:acme/widgets#7")
	r.Types = []string{"github.pull_request.*"}
	other = append(other, r)
	for _, req := range other {
		w, err := e.Service.Watch(ctx, req, "")
		require.NoError(t, err)
		require.False(t, w.Existing, "%+v", req)
		require.NotEqual(t, first.Sentinel.ID, w.Sentinel.ID)
	}

	// allowDuplicate asks for another one.
	r = watchOf("s1", "github:acme/widgets#7")
	r.AllowDuplicate = true
	dup, err := e.Service.Watch(ctx, r, "")
	require.NoError(t, err)
	require.False(t, dup.Existing)
	require.NotEqual(t, first.Sentinel.ID, dup.Sentinel.ID)

	// Once the sentinel is removed (or expired), the same watch creates a
	// new one.
	require.NoError(t, e.Service.Remove(ctx, first.Sentinel.ID))
	fresh, err := e.Service.Watch(ctx, watchOf("s1", "github:acme/widgets#7"), "")
	require.NoError(t, err)
	require.False(t, fresh.Existing)
	require.NotEqual(t, first.Sentinel.ID, fresh.Sentinel.ID)
	require.Equal(t, len(other)+2, countActive(t, e), "the others, the duplicate and the fresh one")
}

func TestAFailedCreateReleasesItsClaim(t *testing.T) {
	e := runtimetest.Start(t, runtimetest.Options{NoWorkers: true})
	ctx := context.Background()
	e.Fake.FailCreate(errors.New("remote down"))
	_, err := e.Service.Watch(ctx, watchOf("s1", "github:acme/widgets#7"), "")
	require.Error(t, err)
	e.Fake.FailCreate(nil)
	w, err := e.Service.Watch(ctx, watchOf("s1", "github:acme/widgets#7"), "")
	require.NoError(t, err, "the claim of the failed create does not hold the next watch")
	require.False(t, w.Existing)
}

func TestWatchKeyUpserts(t *testing.T) {
	e := runtimetest.Start(t, runtimetest.Options{NoWorkers: true})
	ctx := context.Background()
	keyed := func(subject string, u sentinel.Urgency) sentinel.WatchRequest {
		r := watchOf("s1", subject)
		r.Key, r.Urgency = "ci:widgets", u
		return r
	}
	first, err := e.Service.Watch(ctx, keyed("github:acme/widgets#7", sentinel.UrgencyFYI), "")
	require.NoError(t, err)
	require.Equal(t, "ci:widgets", first.Sentinel.Spec.Key)

	same, err := e.Service.Watch(ctx, keyed("github:acme/widgets#7", sentinel.UrgencyFYI), "")
	require.NoError(t, err)
	require.True(t, same.Existing)
	require.Equal(t, first.Sentinel.ID, same.Sentinel.ID)

	// Another urgency on the same subjects: updated in place.
	up, err := e.Service.Watch(ctx, keyed("github:acme/widgets#7", sentinel.UrgencyInterrupt), "")
	require.NoError(t, err)
	require.True(t, up.Updated)
	require.Equal(t, first.Sentinel.ID, up.Sentinel.ID)
	require.Equal(t, sentinel.UrgencyInterrupt, e.Get(first.Sentinel.ID).Spec.Target.Urgency)

	// Another subject: a new sentinel takes the key, the old one goes.
	moved, err := e.Service.Watch(ctx, keyed("github:acme/widgets#8", sentinel.UrgencyInterrupt), "")
	require.NoError(t, err)
	require.True(t, moved.Updated)
	require.NotEqual(t, first.Sentinel.ID, moved.Sentinel.ID)
	_, err = e.Service.Get(ctx, first.Sentinel.ID)
	require.ErrorIs(t, err, sentinels.ErrNotFound)
	require.Equal(t, 1, countActive(t, e))

	// The same key in another session is another watch.
	r := keyed("github:acme/widgets#8", sentinel.UrgencyInterrupt)
	r.SessionID = "s2"
	w, err := e.Service.Watch(ctx, r, "")
	require.NoError(t, err)
	require.False(t, w.Existing || w.Updated)

	bad := keyed("github:acme/widgets#8", sentinel.UrgencyFYI)
	bad.Key = "has space"
	_, err = e.Service.Watch(ctx, bad, "")
	require.Equal(t, sentinel.CodeInvalidInput, codeOf(t, err))
}

// Nodes racing on one watch create one sentinel: the claim is a
// compare-and-set on the watch index, not a lock of one process.
func TestWatchIsIdempotentAcrossThreeNodes(t *testing.T) {
	envs := runtimetest.StartCluster(t, 3, runtimetest.Options{NoWorkers: true})
	ctx := context.Background()
	for _, req := range []sentinel.WatchRequest{watchOf("s1", "github:acme/widgets#7"), func() sentinel.WatchRequest {
		r := watchOf("s1", "github:acme/widgets#9")
		r.Key = "k1"
		return r
	}()} {
		const per = 4
		ids := make(chan string, per*len(envs))
		var wg sync.WaitGroup
		for _, e := range envs {
			for i := 0; i < per; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					w, err := e.Service.Watch(ctx, req, "")
					if err != nil {
						t.Errorf("watch on %s: %v", e.Node, err)
						return
					}
					ids <- w.Sentinel.ID
				}()
			}
		}
		wg.Wait()
		close(ids)
		distinct := map[string]bool{}
		for id := range ids {
			distinct[id] = true
		}
		require.Len(t, distinct, 1, "one sentinel for %d concurrent watches on three nodes", per*len(envs))
	}
	total := 0
	for _, e := range envs {
		c, _, _ := e.Fake.Counts()
		total += c
	}
	require.Equal(t, 2, total, "one provider create per watch in the whole cluster")
}

func TestAutoSelectedProviderNotReadyWarns(t *testing.T) {
	lg := newShaped("local-gh")
	lg.subjects = []string{"github"}
	lg.SetNotReady("gh is not authenticated to github.com: run gh auth login")
	e := runtimetest.Start(t, runtimetest.Options{NoWorkers: true, Extra: []providers.Provider{lg}, Service: []sentinels.Option{sentinels.WithSelectionOrder([]string{"local-gh"})}})
	w, err := e.Service.Watch(context.Background(), sentinel.WatchRequest{SessionID: "s1", PRURL: "https://github.com/acme/widgets/pull/7"}, "")
	require.NoError(t, err, "the watch is made")
	require.Equal(t, "local-gh", w.Sentinel.Provider)
	require.Len(t, w.Sentinel.Warnings, 1)
	warn := w.Sentinel.Warnings[0]
	require.Equal(t, sentinel.WarnProviderNotReady, warn.Code)
	require.Equal(t, "local-gh", warn.Provider)
	require.Contains(t, warn.Message, "run gh auth login")
	require.NotEmpty(t, warn.Fix)
	require.Equal(t, w.Sentinel.Warnings, e.Get(w.Sentinel.ID).View().Warnings, "the record keeps it (views, dashboard)")

	// Ready: no warning.
	lg.SetNotReady("")
	w, err = e.Service.Watch(context.Background(), sentinel.WatchRequest{SessionID: "s1", PRURL: "https://github.com/acme/widgets/pull/8"}, "")
	require.NoError(t, err)
	require.Empty(t, w.Sentinel.Warnings)
}

func TestHookNotCreatedFallsBackWithAWarning(t *testing.T) {
	wh, lg := newShaped("webhook"), newShaped("local-gh")
	wh.needsURL = true
	lg.subjects = []string{"github"}
	wh.FailCreate(errors.New("creating the hook failed: HTTP 404 (needs admin:repo_hook)"))
	e := runtimetest.Start(t, runtimetest.Options{NoWorkers: true, Extra: []providers.Provider{lg, wh}, Service: []sentinels.Option{
		sentinels.WithSelectionOrder([]string{"webhook", "local-gh"}),
		sentinels.WithPublicURL(func() providers.PublicURL { return providers.PublicURL{URL: "https://x.example", Stable: true} })}})
	w, err := e.Service.Watch(context.Background(), sentinel.WatchRequest{SessionID: "s1", PRURL: "https://github.com/acme/widgets/pull/7"}, "")
	require.NoError(t, err)
	require.Equal(t, "local-gh", w.Sentinel.Provider)
	require.Len(t, w.Sentinel.Warnings, 1)
	require.Equal(t, sentinel.WarnHookNotCreated, w.Sentinel.Warnings[0].Code)
	require.Contains(t, w.Sentinel.Warnings[0].Message, "admin:repo_hook")

	// Named explicitly, the failure is the watch's error, as before.
	_, err = e.Service.Watch(context.Background(), sentinel.WatchRequest{SessionID: "s1", PRURL: "https://github.com/acme/widgets/pull/9", Provider: "webhook"}, "")
	require.Equal(t, sentinel.CodeProviderCreateFail, codeOf(t, err))
}
