package webhook

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers"
	"github.com/agentproto/sentinel/providers/github"
	"github.com/agentproto/sentinel/providers/github/githubtest"
)

var defaultEvents = []string{"pull_request", "pull_request_review", "check_suite", "workflow_run", "issue_comment", "status"}

func (h *harness) createTypes(p *Provider, subject string, types ...string) sentinel.Handle {
	h.t.Helper()
	sp := spec(subject)
	sp.Match[0].Types = types
	hd, err := p.Create(context.Background(), providers.CreateRequest{SentinelID: sentinel.NewSentinelID(), Spec: sp, Delivery: providers.Delivery{Mode: providers.ModePush}})
	h.seen(err)
	require.NoError(h.t, err)
	h.seen(hd)
	return hd
}

// TestHookFollowsItsSentinelsTypes: the hook is subscribed to what its
// sentinels' types need (the default types: the spec's five and status),
// extended when a sentinel with an opt-in type is created, narrowed when
// the last one needing it goes; the record says what it is subscribed to.
func TestHookFollowsItsSentinelsTypes(t *testing.T) {
	h := newHarness(t, githubtest.Options{})
	p := h.provider("node-a")
	base := h.create(p, "github:acme/widgets#1")
	require.Equal(t, defaultEvents, h.liveHook(testRepo).Events)

	inline := h.createTypes(p, "github:acme/widgets#1", "github.pull_request_review_comment.created", "github.pull_request_review_thread.*")
	queue := h.createTypes(p, "github:acme/widgets*", "github.merge_group.*", "github.workflow_job.completed")
	require.Equal(t, append(append([]string(nil), defaultEvents...), "workflow_job", "merge_group", "pull_request_review_comment", "pull_request_review_thread"),
		h.liveHook(testRepo).Events)
	require.Equal(t, 1, h.gh.Count(http.MethodPost, "/repos/acme/widgets/hooks"), "one hook, patched")

	require.NoError(t, p.Cancel(ctxT(t), inline))
	require.Equal(t, append(append([]string(nil), defaultEvents...), "workflow_job", "merge_group"), h.liveHook(testRepo).Events)
	require.NoError(t, p.Cancel(ctxT(t), queue))
	require.Equal(t, defaultEvents, h.liveHook(testRepo).Events)
	rec := h.record(testRepo)
	require.Equal(t, defaultEvents, rec.Events)
	require.Len(t, rec.Needs, 1)

	// A sentinel of opt-in types only still gets the spec's five (closure
	// tracking reads pull_request), never less.
	only := h.createTypes(p, "github:acme/widgets#2", "github.pull_request_review_comment.created")
	require.NoError(t, p.Cancel(ctxT(t), base))
	require.Equal(t, append(github.SpecHookEvents(), "pull_request_review_comment"), h.liveHook(testRepo).Events)
	require.NoError(t, p.Cancel(ctxT(t), only))
	require.Empty(t, h.gh.Hooks(testRepo), "deleted with its last holder")
	h.gh.Verify(t)
}

// TestAttachResubscribesAnOlderHook: a hook created before hooks followed
// their sentinels' types (the spec's five events, a record without needs)
// is subscribed to what its holders need (the defaults: status too) when
// it is re-attached.
func TestAttachResubscribesAnOlderHook(t *testing.T) {
	h := newHarness(t, githubtest.Options{})
	p := h.provider("node-a")
	hd := h.create(p, "github:acme/widgets#1")
	// Make it look older: the spec's five on GitHub, no needs, no events.
	rec, rev, err := p.store().load(ctxT(t), testRepo)
	require.NoError(t, err)
	rec.Needs, rec.Events = nil, nil
	_, err = p.store().save(ctxT(t), rec, rev)
	require.NoError(t, err)
	body, err := newHookBody("", rec.Origin, rec.Key, rec.Secret, github.SpecHookEvents())
	require.NoError(t, err)
	_, _, _, err = h.runner.API(ctxT(t), http.MethodPatch, hookPath(testRepo, rec.HookID), body)
	require.NoError(t, err)
	require.Equal(t, github.SpecHookEvents(), h.liveHook(testRepo).Events)

	fresh := h.provider("node-b") // no recently-verified memory
	_, err = fresh.Attach(ctxT(t), hd, providers.Delivery{Mode: providers.ModePush})
	require.NoError(t, err)
	require.Equal(t, defaultEvents, h.liveHook(testRepo).Events)
	require.Equal(t, defaultEvents, h.record(testRepo).Events)
	h.gh.Verify(t)
}
