package node_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/e2e/e2etest"
	"github.com/agentproto/sentinel/providers/github"
	"github.com/agentproto/sentinel/providers/github/githubtest"
)

// TestWebhookGitHubAsItIs drives the built binary with real payload
// shapes of a repository with fork PRs and a merge queue: a fork PR's
// check suite (no pull_requests) reaches the PR's sentinel; the PR leaving
// the queue and its group invalidated are delivered to a sentinel that
// asked for them, which keeps watching (not merged, not expired) until
// the PR's real close.
func TestWebhookGitHubAsItIs(t *testing.T) {
	gh := githubtest.New(t, githubtest.Options{Start: time.Now().Add(-time.Hour)})
	gh.OpenPR(whRepo, githubtest.PR{Number: 2, Head: "ec26c3e57ca3a959ca5aad62de7213c562f8c821", HeadRepo: "contributor/Hello-World"})
	home := t.TempDir()
	n := startNode(t, home, e2etest.GHNodeEnv(gh, "AGENTPROTO_PUBLIC_URL="+whPublicURL)...)
	id := createSentinel(t, n, map[string]any{"subject": "github:" + whRepo + "#2", "sessionId": "s1", "provider": "webhook",
		"types": []string{"github.check_suite.completed", "github.pull_request.*", "github.merge_group.*"},
		"until": map[string]any{"kind": "subject_terminal"}})
	hook := onlyHook(t, gh)
	require.Contains(t, gh.Hooks(whRepo)[0].Events, "merge_group", "the hook follows the sentinel's opt-in types")
	inbound := n.url + "/inbound/sentinel-" + hook.key
	var want []string
	deliver := func(event, file string, edit func([]byte) []byte) {
		t.Helper()
		body := e2etest.WebhookFixture(t, file)
		if edit != nil {
			body = edit(body)
		}
		guid := e2etest.NewGUID(t)
		a := postRaw(inbound, ghHeaders(event, guid, github.SignWebhook(hook.secret, body)), body)
		require.Equal(t, http.StatusOK, a.status, "%s: %s", file, a.raw)
		require.EqualValues(t, 1, a.body["delivered"], "%s: %s", file, a.raw)
		want = append(want, github.WebhookEventID(guid))
	}
	deliver("check_suite", "check_suite/completed-fork.json", nil)
	deliver("pull_request", "pull_request/dequeued-ci-failure.json", nil)
	// The real merge_group payload is of octo-org/octo-repo#104: the same
	// group, as this repository's PR 2 queued on master.
	deliver("merge_group", "merge_group/destroyed-invalidated.json", func(b []byte) []byte {
		return replaceAll(b, map[string]string{"octo-org/octo-repo": whRepo, "pr-104-": "pr-2-", "refs/heads/main": "refs/heads/master",
			"gh-readonly-queue/main/": "gh-readonly-queue/master/"})
	})
	waitUntil(t, n, 20*time.Second, func() bool { return eventCount(t, n, id) >= len(want) }, "eventCount reaches %d", len(want))
	require.Equal(t, "active", sentinelView(t, n, id)["status"], "dequeued and an invalidated group: not merged, still watching")

	deliver("pull_request", "pull_request/closed-merged-by-maintainer.json", nil)
	waitUntil(t, n, 20*time.Second, func() bool { return sentinelView(t, n, id)["status"] == "expired" }, "the merge ends the watch")
	stopNode(t, n)
	require.Equal(t, want, inboxEventIDs(t, home, "s1"))
	gh.Verify(t)
}

func replaceAll(b []byte, m map[string]string) []byte {
	s := string(b)
	for from, to := range m {
		s = strings.ReplaceAll(s, from, to)
	}
	return []byte(s)
}
