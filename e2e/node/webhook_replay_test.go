package node_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/e2e/e2etest"
	"github.com/agentproto/sentinel/providers/github"
	"github.com/agentproto/sentinel/providers/github/githubtest"
)

// TestWebhookReplayUnderNewDeliveryIDsLandsOnce posts captured, validly
// signed GitHub deliveries to the built binary's /inbound route under fresh
// X-GitHub-Delivery ids (the signature does not cover that header): each
// body lands in the inbox once, however often it is replayed, so a replay
// can neither repeat a message nor spend an until: count. A body re-sent
// under another X-GitHub-Event (not signed either) is refused with
// event_payload_mismatch and delivers nothing.
func TestWebhookReplayUnderNewDeliveryIDsLandsOnce(t *testing.T) {
	gh := githubtest.New(t, githubtest.Options{Start: time.Now().Add(-time.Hour)})
	gh.AddRepo(whRepo)
	home := t.TempDir()
	n := startNode(t, home, e2etest.GHNodeEnv(gh, "AGENTPROTO_PUBLIC_URL="+whPublicURL)...)
	id := createSentinel(t, n, map[string]any{"subject": "github:" + whRepo + "#2", "types": []string{"*"},
		"until": map[string]any{"kind": "count", "n": 3}, "sessionId": "s1", "provider": "webhook"})
	hook := onlyHook(t, gh)
	inbound := n.url + "/inbound/sentinel-" + hook.key
	deliver := func(event, guid string, body []byte) answer {
		t.Helper()
		return postRaw(inbound, ghHeaders(event, guid, github.SignWebhook(hook.secret, body)), body)
	}

	review := e2etest.WebhookFixture(t, "pull_request_review/submitted-1.json")
	sync := e2etest.WebhookFixture(t, "pull_request/synchronize-1.json")
	a := deliver("pull_request_review", e2etest.NewGUID(t), review)
	require.Equal(t, http.StatusOK, a.status, a.raw)
	require.EqualValues(t, 1, a.body["delivered"], a.raw)
	// The same signed body under new delivery ids: accepted (GitHub must
	// not see failures) and stored nothing new.
	for range 3 {
		a = deliver("pull_request_review", e2etest.NewGUID(t), review)
		require.Equal(t, http.StatusOK, a.status, a.raw)
		require.EqualValues(t, 0, a.body["delivered"], "a replay under a new delivery id stores nothing: %s", a.raw)
	}
	// The same body under another event name is refused.
	a = deliver("pull_request", e2etest.NewGUID(t), review)
	require.Equal(t, http.StatusBadRequest, a.status, a.raw)
	require.Equal(t, "event_payload_mismatch", a.body["error"], a.raw)
	a = deliver("issue_comment", e2etest.NewGUID(t), sync)
	require.Equal(t, http.StatusBadRequest, a.status, a.raw)
	require.Equal(t, "event_payload_mismatch", a.body["error"], a.raw)
	// A different event still lands.
	a = deliver("pull_request", e2etest.NewGUID(t), sync)
	require.Equal(t, http.StatusOK, a.status, a.raw)
	require.EqualValues(t, 1, a.body["delivered"], a.raw)

	want := []string{github.WebhookEventID(review), github.WebhookEventID(sync)}
	waitUntil(t, n, 20*time.Second, func() bool { return eventCount(t, n, id) >= len(want) }, "eventCount reaches %d", len(want))
	require.Equal(t, len(want), eventCount(t, n, id), "replays did not count toward until: count")
	require.Equal(t, "active", sentinelView(t, n, id)["status"], "two distinct events of three: still active")
	stopNode(t, n)
	require.Equal(t, want, inboxEventIDs(t, home, "s1"), "each signed body once, whatever its delivery ids")
}
