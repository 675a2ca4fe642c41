package node_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/e2e/e2etest"
	"github.com/agentproto/sentinel/providers/github"
	"github.com/agentproto/sentinel/providers/github/githubtest"
)

const (
	whRepo      = "Codertocat/Hello-World"
	whPublicURL = "https://sentinel.example.test"
	whPrefix    = whPublicURL + "/inbound/sentinel-"
)

// webhookHook is the hook the fake GitHub received, as the test needs it.
type webhookHook struct {
	id     int64
	key    string
	secret string
}

// onlyHook returns the repository's single hook on the fake GitHub.
func onlyHook(t *testing.T, gh *githubtest.Server) webhookHook {
	t.Helper()
	hooks := gh.Hooks(whRepo)
	require.Len(t, hooks, 1, "one hook per repository")
	h := hooks[0]
	require.True(t, h.Active)
	require.Equal(t, "json", h.ContentType)
	require.True(t, strings.HasPrefix(h.URL, whPrefix), "hook url %q points at the public URL", h.URL)
	key := strings.TrimPrefix(h.URL, whPrefix)
	require.Regexp(t, `^[0-9a-f]{32}$`, key)
	require.Len(t, h.Secret, 64, "32 random bytes, hex")
	require.Subset(t, h.Events, github.SpecHookEvents(), "at least the spec's five events")
	require.Subset(t, github.WebhookEvents(), h.Events, "only events the provider normalizes")
	return webhookHook{id: h.ID, key: key, secret: h.Secret}
}

// TestWebhookDeliveriesEndToEnd drives the webhook provider and push
// ingress in the built binary, whose gh talks to the fake GitHub: a
// sentinel creates the repository hook; real signed payloads land in the
// inbox once each, even redelivered or delivered 100 times concurrently;
// forged, malformed and oversized deliveries are refused with their status
// and deliver nothing; ping and unsupported events are ignored; a failed
// delivery is redelivered by reconciliation on restart; a merged PR expires
// the sentinel and the hook is deleted with its last holder.
func TestWebhookDeliveriesEndToEnd(t *testing.T) {
	gh := githubtest.New(t, githubtest.Options{Start: time.Now().Add(-time.Hour)})
	gh.AddRepo(whRepo)
	env := e2etest.GHNodeEnv(gh, "AGENTPROTO_PUBLIC_URL="+whPublicURL)
	home := t.TempDir()
	n := startNode(t, home, env...)

	a := n.do("GET", "/adapters", nil, n.token)
	require.Equal(t, http.StatusOK, a.status, a.raw)
	require.Equal(t, "ready", adapterStatus(t, a, "webhook"), a.raw)

	// Two sentinels on one repository share one hook: PR #2 (session s1)
	// and PR #99 (session s2).
	id := createSentinel(t, n, map[string]any{"subject": "github:" + whRepo + "#2", "types": []string{"*"}, "until": "subject_terminal",
		"sessionId": "s1", "provider": "webhook"})
	other := createSentinel(t, n, map[string]any{"subject": "github:" + whRepo + "#99", "types": []string{"*"}, "sessionId": "s2", "provider": "webhook"})
	hook := onlyHook(t, gh)
	inbound := n.url + "/inbound/sentinel-" + hook.key
	for _, v := range []string{n.do("GET", "/sentinels", nil, n.token).raw, n.do("GET", "/sentinels/"+id, nil, n.token).raw,
		n.do("GET", "/sentinels/"+id+"/status", nil, n.token).raw} {
		require.NotContains(t, v, hook.secret, "no view carries the hook secret")
	}

	deliver := func(event, guid string, body []byte) answer {
		t.Helper()
		return postRaw(inbound, ghHeaders(event, guid, github.SignWebhook(hook.secret, body)), body)
	}
	requireStored := func(a answer) {
		t.Helper()
		require.Equal(t, http.StatusOK, a.status, a.raw)
		require.Equal(t, true, a.body["ok"], a.raw)
		require.EqualValues(t, 1, a.body["events"], a.raw)
		require.EqualValues(t, 2, a.body["sentinels"], "fanned out to every sentinel on the hook: %s", a.raw)
	}

	// Signed deliveries of real payloads land: each answers 200 once
	// stored. An event's id is evt_<X-GitHub-Delivery>.
	var want []string
	var reviewGUID string
	for _, d := range []struct{ event, file string }{
		{"pull_request_review", "pull_request_review/submitted-1.json"},
		{"pull_request", "pull_request/synchronize-1.json"},
		{"check_suite", "check_suite/completed-several-prs.json"},
		{"issue_comment", "issue_comment/created-1.json"}, // PR #1: no sentinel watches it
	} {
		guid := e2etest.NewGUID(t)
		if reviewGUID == "" {
			reviewGUID = guid
		}
		body := e2etest.WebhookFixture(t, d.file)
		a := deliver(d.event, guid, body)
		requireStored(a)
		require.GreaterOrEqual(t, a.body["delivered"], float64(1), a.raw)
		if d.event != "issue_comment" {
			want = append(want, github.WebhookEventID(guid))
		}
	}

	// A redelivery (same X-GitHub-Delivery) is absorbed.
	reviewBody := e2etest.WebhookFixture(t, "pull_request_review/submitted-1.json")
	a = deliver("pull_request_review", reviewGUID, reviewBody)
	requireStored(a)
	require.EqualValues(t, 0, a.body["delivered"], "a redelivery stores nothing new: %s", a.raw)

	// 100 concurrent identical deliveries: one inbox message.
	labeled := e2etest.WebhookFixture(t, "pull_request/labeled-1.json")
	labeledGUID := e2etest.NewGUID(t)
	want = append(want, github.WebhookEventID(labeledGUID))
	answers := make([]answer, 100)
	var wg sync.WaitGroup
	for i := range answers {
		wg.Go(func() { answers[i] = deliver("pull_request", labeledGUID, labeled) })
	}
	wg.Wait()
	delivered := 0.0
	for i, a := range answers {
		require.Equal(t, http.StatusOK, a.status, "delivery %d: %s", i, a.raw)
		d, _ := a.body["delivered"].(float64)
		delivered += d
	}
	require.LessOrEqual(t, delivered, 2.0, "at most one new store per sentinel over 100 identical deliveries")

	// Refused deliveries: the right status, and nothing delivered.
	before := eventCount(t, n, id)
	body := e2etest.WebhookFixture(t, "pull_request/opened-1.json")
	// refused are the ids of the refused bodies that are never accepted
	// later (body itself is, under lostGUID below).
	var refused []string
	refuse := func(name string, url string, h http.Header, body []byte, status int, code, reason string) answer {
		t.Helper()
		a := postRaw(url, h, body)
		require.Equal(t, status, a.status, "%s: %s", name, a.raw)
		if code != "" {
			require.Equal(t, code, a.body["error"], "%s: %s", name, a.raw)
		}
		if reason != "" {
			require.Equal(t, reason, a.body["reason"], "%s: %s", name, a.raw)
		}
		return a
	}
	guid := func() string { return e2etest.NewGUID(t) }

	good := github.SignWebhook(hook.secret, body)
	tampered := good[:len(good)-1] + string("0123456789abcdef"[(strings.IndexByte("0123456789abcdef", good[len(good)-1])+1)%16])
	refuse("bad signature", inbound, ghHeaders("pull_request", guid(), tampered), body, http.StatusUnauthorized, "bad_signature", "bad_signature")
	refuse("missing signature", inbound, ghHeaders("pull_request", guid(), ""), body, http.StatusUnauthorized, "bad_signature", "missing_signature")
	refuse("wrong secret", inbound, ghHeaders("pull_request", guid(), github.SignWebhook(randomHex(t, 32), body)), body,
		http.StatusUnauthorized, "bad_signature", "bad_signature")
	tamperedGUID := guid()
	refuse("tampered body", inbound, ghHeaders("pull_request", tamperedGUID, good), append([]byte(" "), body...), http.StatusUnauthorized, "bad_signature", "")
	refused = append(refused, github.WebhookEventID(tamperedGUID))
	unknownKey := randomHex(t, 16)
	a = refuse("unknown key", n.url+"/inbound/sentinel-"+unknownKey, ghHeaders("pull_request", guid(), good), body, http.StatusNotFound, "", "")
	require.NotContains(t, a.raw, unknownKey, "the 404 echoes nothing")
	require.NotContains(t, a.raw, hook.key)
	// The key is looked up before the body is read: a body that never
	// finishes still gets its 404 at once.
	status, raw := n.rawRequest("POST /inbound/sentinel-"+unknownKey+" HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 26214400", string(body[:64]), 10*time.Second)
	require.Equal(t, http.StatusNotFound, status, raw)
	truncated := body[:len(body)/2]
	truncatedGUID := guid()
	refused = append(refused, github.WebhookEventID(truncatedGUID))
	refuse("truncated json", inbound, ghHeaders("pull_request", truncatedGUID, github.SignWebhook(hook.secret, truncated)), truncated,
		http.StatusBadRequest, "invalid_json", "")
	notJSON := []byte("action=opened&number=2")
	refuse("non-json", inbound, ghHeaders("pull_request", guid(), github.SignWebhook(hook.secret, notJSON)), notJSON,
		http.StatusBadRequest, "invalid_json", "")
	refuse("no event header", inbound, ghHeaders("", guid(), good), body, http.StatusBadRequest, "missing_event_header", "")
	refuse("no delivery header", inbound, ghHeaders("pull_request", "", good), body, http.StatusBadRequest, "missing_delivery_header", "")
	huge := make([]byte, 25<<20+1)
	copy(huge, body)
	refuse("over 25 MiB", inbound, ghHeaders("pull_request", guid(), github.SignWebhook(hook.secret, huge)), huge,
		http.StatusRequestEntityTooLarge, "body_too_large", "")

	// Ping and unsupported event types are acknowledged and ignored.
	for _, d := range []struct{ event, file string }{{"ping", "ping/event-1.json"}, {"push", "push/event-1.json"}} {
		g := guid()
		a := deliver(d.event, g, e2etest.WebhookFixture(t, d.file))
		require.Equal(t, http.StatusOK, a.status, "%s: %s", d.event, a.raw)
		require.JSONEq(t, `{"ok":true,"action":"ignored","events":0}`, a.raw, d.event)
	}
	waitUntil(t, n, 20*time.Second, func() bool { return eventCount(t, n, id) >= len(want) }, "eventCount reaches %d", len(want))
	require.Equal(t, len(want), eventCount(t, n, id), "refused deliveries counted nothing (was %d before them)", before)

	// Reconciliation: GitHub recorded a delivery that failed while the
	// node was down; on restart the node asks GitHub to redeliver it.
	stopNode(t, n)
	require.NotContains(t, n.logs.String(), hook.secret, "the hook secret is never logged")
	lostGUID := e2etest.NewGUID(t)
	lostID := gh.AddDelivery(whRepo, hook.id, githubtest.Delivery{GUID: lostGUID, Event: "pull_request", Action: "opened", StatusCode: http.StatusBadGateway})
	okID := gh.AddDelivery(whRepo, hook.id, githubtest.Delivery{GUID: e2etest.NewGUID(t), Event: "pull_request", Action: "edited"})
	n = startNode(t, home, env...)
	inbound = n.url + "/inbound/sentinel-" + hook.key
	waitUntil(t, n, 20*time.Second, func() bool {
		for _, r := range gh.Redeliveries() {
			if r.HookID == hook.id && r.DeliveryID == lostID {
				return true
			}
		}
		return false
	}, "the node asks GitHub to redeliver delivery %d", lostID)
	for _, r := range gh.Redeliveries() {
		require.NotEqual(t, okID, r.DeliveryID, "a successful delivery is not redelivered")
	}
	require.Equal(t, hook, onlyHook(t, gh), "the restart kept the hook, its key and its secret")
	// Status shows the reconciliation counts once the pass is saved.
	var st answer
	waitUntil(t, n, 20*time.Second, func() bool {
		st = n.do("GET", "/sentinels/"+id+"/status", nil, n.token)
		return st.status == http.StatusOK && strings.Contains(st.raw, `"redelivered":1`)
	}, "status shows the reconciliation counts")
	require.Contains(t, st.raw, `"failed":1`, st.raw)
	require.NotContains(t, st.raw, hook.secret)
	// GitHub redelivers it: it lands like any delivery.
	requireStored(deliver("pull_request", lostGUID, body))
	want = append(want, github.WebhookEventID(lostGUID))

	// A merged PR is terminal: the sentinel expires and lets go of the
	// hook, which stays for the other sentinel until it goes too.
	closedGUID := e2etest.NewGUID(t)
	closed := e2etest.WebhookFixture(t, "pull_request/closed-merged-by-maintainer.json")
	requireStored(deliver("pull_request", closedGUID, closed))
	want = append(want, github.WebhookEventID(closedGUID))
	waitUntil(t, n, 20*time.Second, func() bool { return sentinelView(t, n, id)["status"] == "expired" }, "the sentinel expires")
	require.Equal(t, hook, onlyHook(t, gh), "the other sentinel still holds the hook")
	a = n.do("DELETE", "/sentinels/"+other, nil, n.token)
	require.Equal(t, http.StatusOK, a.status, a.raw)
	waitUntil(t, n, 20*time.Second, func() bool { return len(gh.Hooks(whRepo)) == 0 }, "the hook is deleted with its last holder")
	a = deliver("pull_request", e2etest.NewGUID(t), body)
	require.Equal(t, http.StatusNotFound, a.status, "the route of a deleted hook is gone: %s", a.raw)
	require.NotContains(t, a.raw, hook.key)
	gh.Verify(t)

	stopNode(t, n)
	require.NotContains(t, n.logs.String(), hook.secret, "the hook secret is never logged")
	got := inboxEventIDs(t, home, "s1")
	require.Equal(t, want, got, "every accepted delivery exactly once, in order; nothing refused")
	for _, r := range refused {
		require.NotContains(t, got, r)
	}
	require.Empty(t, inboxEventIDs(t, home, "s2"), "PR #99 saw no event")
}

// adapterStatus returns the status of the adapter slug in a GET /adapters
// answer.
func adapterStatus(t *testing.T, a answer, slug string) string {
	t.Helper()
	list, ok := a.body["adapters"].([]any)
	require.True(t, ok, a.raw)
	for _, x := range list {
		m, _ := x.(map[string]any)
		if m["slug"] == slug {
			s, _ := m["status"].(string)
			return s
		}
	}
	t.Fatalf("no adapter %q in %s", slug, a.raw)
	return ""
}
