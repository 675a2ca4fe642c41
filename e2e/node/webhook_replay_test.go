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
// signed GitHub deliveries to the built binary's /inbound route. The event
// id is the spec's evt_<X-GitHub-Delivery>, and the signed body's digest
// is a second dedup key: GitHub's redelivery (same delivery id, same body)
// lands once; the same body under five fresh delivery ids (the signature
// does not cover that header) lands once; another body under a delivery id
// already handled (a forged header) lands once, never twice. So a replay
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
	accepted := func(a answer) {
		t.Helper()
		require.Equal(t, http.StatusOK, a.status, a.raw)
		require.Equal(t, true, a.body["ok"], a.raw)
	}

	review := e2etest.WebhookFixture(t, "pull_request_review/submitted-1.json")
	sync := e2etest.WebhookFixture(t, "pull_request/synchronize-1.json")
	labeled := e2etest.WebhookFixture(t, "pull_request/labeled-1.json")
	reviewGUID := e2etest.NewGUID(t)
	a := deliver("pull_request_review", reviewGUID, review)
	accepted(a)
	require.EqualValues(t, 1, a.body["delivered"], a.raw)
	// GitHub's redelivery: same delivery id, same body.
	accepted(deliver("pull_request_review", reviewGUID, review))
	// The same signed body under five new delivery ids: accepted (GitHub
	// must not see failures), delivered nothing new.
	for range 5 {
		accepted(deliver("pull_request_review", e2etest.NewGUID(t), review))
	}
	// Another signed body under the delivery id already handled.
	accepted(deliver("pull_request", reviewGUID, labeled))
	// The same body under another event name is refused.
	a = deliver("pull_request", e2etest.NewGUID(t), review)
	require.Equal(t, http.StatusBadRequest, a.status, a.raw)
	require.Equal(t, "event_payload_mismatch", a.body["error"], a.raw)
	a = deliver("issue_comment", e2etest.NewGUID(t), sync)
	require.Equal(t, http.StatusBadRequest, a.status, a.raw)
	require.Equal(t, "event_payload_mismatch", a.body["error"], a.raw)
	// A different event still lands.
	syncGUID := e2etest.NewGUID(t)
	accepted(deliver("pull_request", syncGUID, sync))

	want := []string{github.WebhookEventID(reviewGUID), github.WebhookEventID(syncGUID)}
	waitUntil(t, n, 20*time.Second, func() bool { return eventCount(t, n, id) >= len(want) }, "eventCount reaches %d", len(want))
	// The five replays under new delivery ids were stored (their message
	// ids differ) and dropped by the pipeline's seen window as duplicates
	// (the redelivery and the forged header share the original's message
	// id: the stream dropped them). Wait until the journal shows all five,
	// so a late copy cannot land after the assertions.
	waitUntil(t, n, 20*time.Second, func() bool { return duplicatesJournaled(t, n, id) >= 5 }, "the replays are journaled as duplicates")
	require.Equal(t, len(want), eventCount(t, n, id), "replays did not count toward until: count")
	require.Equal(t, "active", sentinelView(t, n, id)["status"], "two distinct events of three: still active")
	stopNode(t, n)
	require.Equal(t, want, inboxEventIDs(t, home, "s1"), "each delivery once, whatever its delivery ids or bodies")
}

// duplicatesJournaled counts the sentinel's duplicate decisions.
func duplicatesJournaled(t *testing.T, n *node, id string) int {
	t.Helper()
	a := n.do("GET", "/sentinels/"+id+"/decisions?limit=1000", nil, n.token)
	require.Equal(t, http.StatusOK, a.status, a.raw)
	ds, _ := a.body["decisions"].([]any)
	c := 0
	for _, d := range ds {
		if m, _ := d.(map[string]any); m["decision"] == "duplicate" {
			c++
		}
	}
	return c
}
