package node_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/providers/agentpush/agentpushtest"
)

const apSubject = "jira:PROJ-1"

// apEvent is the i-th test event on the agentpush subject.
func apEvent(prefix string, i int) sentinel.Event {
	return sentinel.NewEvent(fmt.Sprintf("evt_%s_%03d", prefix, i), "//agentpush.test/jira", "jira.issue.updated",
		apSubject, []string{apSubject, "jira:PROJ"}, time.Unix(1790000000+int64(i), 0).UTC(),
		fmt.Sprintf("PROJ-1 update %03d", i), false, map[string]any{"i": i})
}

// setupAgentpush runs POST /adapters/agentpush/setup with the key and the
// fake's base URL (and extra fields) and checks the answer never echoes the
// key.
func setupAgentpush(t *testing.T, n *node, fake *agentpushtest.Server, key string, extra map[string]string) {
	t.Helper()
	fields := map[string]string{"apiKey": key, "baseUrl": fake.URL}
	for k, v := range extra {
		fields[k] = v
	}
	a := n.do("POST", "/adapters/agentpush/setup", map[string]any{"fields": fields}, n.token)
	require.Equal(t, http.StatusOK, a.status, a.raw)
	require.NotContains(t, a.raw, key, "setup never echoes the key")
	setup, _ := a.body["setup"].(map[string]any)
	require.Contains(t, setup["stored"], "apiKey", a.raw)
	readiness, _ := setup["readiness"].(map[string]any)
	require.Equal(t, true, readiness["ready"], a.raw)
}

// onlySubscription returns the fake's single subscription and checks it
// was created for sentinel id.
func onlySubscription(t *testing.T, fake *agentpushtest.Server, id string) agentpushtest.Subscription {
	t.Helper()
	subs := fake.Subscriptions()
	require.Len(t, subs, 1)
	sub := subs[0]
	require.Equal(t, apSubject, sub.Subject)
	require.Equal(t, "jira", sub.Source, "source is the subject's scheme")
	require.Nil(t, sub.Types, "a * type sends no filter")
	require.Equal(t, "agentproto:sentinel:"+id, sub.ConsumerRef)
	return sub
}

// TestAgentpushPollSurvivesSIGKILL drives the agentpush provider in the
// built binary against the fake agentpush API: setup through the adapters
// route, a poll sentinel fed 60 events in batches of 7 while the node is
// SIGKILLed at random points and restarted, then every event is in the
// inbox exactly once and in order and the fake saw the ack of the last seq.
// The API key appears in no log line, view or answer.
func TestAgentpushPollSurvivesSIGKILL(t *testing.T) {
	const total = 60
	home := t.TempDir()
	key := "ap_live_e2e_" + randomHex(t, 16)
	fake := agentpushtest.Start(t, agentpushtest.Config{APIKey: key})
	env := []string{
		"AGENTPROTO_POLL_ACTIVE_INTERVAL=20ms",
		"AGENTPROTO_POLL_IDLE_INTERVAL=20ms",
		"AGENTPROTO_POLL_BATCH_LIMIT=7",
		"AGENTPROTO_DELIVERY_RETRY_BASE=20ms",
		"AGENTPROTO_DELIVERY_RETRY_MAX=200ms",
		// A delivery in flight when the node is killed is redelivered by
		// JetStream after the ack wait (60s by default).
		"AGENTPROTO_BUS_ACK_WAIT=2s",
	}
	seed := time.Now().UnixNano()
	t.Logf("crash seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 11))

	n := startNode(t, home, env...)
	nodes := []*node{n} // every incarnation, whose logs are checked for the key
	var seen []string   // every API answer, checked for the key at the end
	get := func(path string) answer {
		t.Helper()
		a := n.do("GET", path, nil, n.token)
		require.Equal(t, http.StatusOK, a.status, "%s: %s", path, a.raw)
		seen = append(seen, a.raw)
		return a
	}
	require.Equal(t, "available", adapterStatus(t, get("/adapters"), "agentpush"), "not ready without a key")
	setupAgentpush(t, n, fake, key, nil)
	require.Equal(t, "ready", adapterStatus(t, get("/adapters"), "agentpush"))

	a := n.do("POST", "/sentinels", map[string]any{"subject": apSubject, "types": []string{"*"}, "sessionId": "s1", "provider": "agentpush"}, n.token)
	require.Equal(t, http.StatusCreated, a.status, a.raw)
	seen = append(seen, a.raw)
	id := a.body["sentinel"].(map[string]any)["id"].(string)
	sub := onlySubscription(t, fake, id)
	require.Equal(t, "poll", sub.Mode)
	for _, r := range fake.RequestsTo("POST", "/subscriptions") {
		require.Equal(t, "Bearer "+key, r.Header.Get("Authorization"), "the key goes in the Authorization header only")
		require.NotContains(t, string(r.Body), key)
	}

	// The events arrive in five chunks; after each, the node is killed at
	// a random point while it polls, publishes, delivers and acks the
	// batches, and restarted on the same home.
	var want []string
	const chunk = total / 5
	for round := 0; round < total/chunk; round++ {
		for i := round * chunk; i < (round+1)*chunk; i++ {
			ev := apEvent("ap", i)
			want = append(want, ev.ID)
			require.EqualValues(t, i+1, fake.Enqueue(sub.ID, ev))
		}
		<-time.After(time.Duration(5+rng.IntN(60)) * time.Millisecond)
		t.Logf("round %d: killing with ack at %d", round, fake.Acked(sub.ID))
		n.kill()
		n = startNode(t, home, env...)
		nodes = append(nodes, n)
	}
	t.Cleanup(func() {
		if t.Failed() {
			reqs := fake.Requests()
			for _, r := range reqs[max(0, len(reqs)-30):] {
				t.Logf("fake saw %s %s?%s %s", r.Method, r.Path, r.Query, r.Body)
			}
			t.Logf("fake acked %d pending %v", fake.Acked(sub.ID), fake.Pending(sub.ID))
		}
	})
	waitUntil(t, n, 30*time.Second, func() bool { return fake.Acked(sub.ID) == total && eventCount(t, n, id) >= total },
		"every seq acked and counted")
	require.Equal(t, total, eventCount(t, n, id), "counted once each")
	require.Empty(t, fake.Pending(sub.ID))
	for _, r := range fake.RequestsTo("POST", "/subscriptions/"+sub.ID+"/ack") {
		require.NotContains(t, string(r.Body), key)
	}
	get("/sentinels")
	get("/sentinels/" + id)
	st := get("/sentinels/" + id + "/status")
	require.Equal(t, true, st.body["status"].(map[string]any)["ok"], st.raw)
	get("/adapters")

	for _, raw := range seen {
		require.NotContains(t, raw, key, "an API answer carries the key")
	}
	stopNode(t, n)
	for i, nd := range nodes {
		require.NotContains(t, nd.logs.String(), key, "node %d logged the key", i)
	}
	require.Equal(t, want, inboxEventIDs(t, home, "s1"), "every event exactly once, in order")
}

// TestAgentpushRejectedKey makes the fake agentpush refuse: a 503, a 403
// and a revoked key (401) on create are provider_create_failed with a
// message naming the status (and, for the key, the fix); the existing
// sentinel's status shows the 401; the key appears in no answer and no log
// line.
func TestAgentpushRejectedKey(t *testing.T) {
	home := t.TempDir()
	key := "ap_live_e2e_" + randomHex(t, 16)
	fake := agentpushtest.Start(t, agentpushtest.Config{APIKey: key})
	n := startNode(t, home)
	setupAgentpush(t, n, fake, key, nil)
	var seen []string
	createFails := func(status string) string {
		t.Helper()
		a := n.do("POST", "/sentinels", map[string]any{"subject": "jira:PROJ-2", "types": []string{"*"}, "sessionId": "s1", "provider": "agentpush"}, n.token)
		seen = append(seen, a.raw)
		require.Equal(t, http.StatusBadRequest, a.status, a.raw)
		require.Equal(t, "provider_create_failed", a.body["error"], a.raw)
		msg, _ := a.body["message"].(string)
		require.Contains(t, msg, "HTTP "+status, msg)
		require.NotContains(t, msg, key)
		return msg
	}
	// Before any sentinel exists (no poll can take the injected faults).
	fake.FailNext(http.StatusServiceUnavailable, 1)
	createFails("503")
	fake.FailAuth(http.StatusForbidden)
	createFails("403")
	fake.FailAuth(0)
	require.Empty(t, fake.Subscriptions())

	id := createSentinel(t, n, map[string]any{"subject": apSubject, "types": []string{"*"}, "sessionId": "s1", "provider": "agentpush"})
	onlySubscription(t, fake, id)
	fake.SetKey("ap_live_rotated_" + randomHex(t, 8))
	msg := createFails("401")
	st := n.do("GET", "/sentinels/"+id+"/status", nil, n.token)
	seen = append(seen, st.raw)
	require.Equal(t, http.StatusOK, st.status, st.raw)
	require.Equal(t, false, st.body["status"].(map[string]any)["ok"], st.raw)
	require.Contains(t, st.raw, "HTTP 401", st.raw)
	for _, p := range []string{"/sentinels", "/sentinels/" + id, "/adapters"} {
		seen = append(seen, n.do("GET", p, nil, n.token).raw)
	}
	for _, raw := range seen {
		require.NotContains(t, raw, key, "an API answer carries the key")
	}
	stopNode(t, n)
	require.NotContains(t, n.logs.String(), key, "the key is never logged")
	// Last, as it is the one known failure: the message must name the fix
	// (re-run the agentpush setup with a valid apiKey), as the readiness
	// reason does.
	require.Contains(t, msg, "setup", "the message names the fix: %s", msg)
}

// TestAgentpushPushSignatures opts agentpush into push delivery (an https
// public URL and delivery=push) and posts signed envelopes to the binary's
// push route as the service would: a valid v2 signature lands once, a
// stale (either way), tampered, missing or legacy signature is a 401 and
// delivers nothing.
func TestAgentpushPushSignatures(t *testing.T) {
	home := t.TempDir()
	key := "ap_live_e2e_" + randomHex(t, 16)
	fake := agentpushtest.Start(t, agentpushtest.Config{APIKey: key})
	n := startNode(t, home, "AGENTPROTO_PUBLIC_URL=https://sentinel.example.test")
	setupAgentpush(t, n, fake, key, map[string]string{"delivery": "push"})
	id := createSentinel(t, n, map[string]any{"subject": apSubject, "types": []string{"*"}, "sessionId": "s1", "provider": "agentpush"})
	sub := onlySubscription(t, fake, id)
	require.Equal(t, "push", sub.Mode)
	const prefix = "https://sentinel.example.test/inbound/sentinel-"
	require.True(t, strings.HasPrefix(sub.CallbackURL, prefix), sub.CallbackURL)
	require.NotEmpty(t, sub.CallbackSecret)
	url := n.url + strings.TrimPrefix(sub.CallbackURL, "https://sentinel.example.test")
	secret := sub.CallbackSecret
	for _, v := range []string{n.do("GET", "/sentinels", nil, n.token).raw, n.do("GET", "/sentinels/"+id+"/status", nil, n.token).raw} {
		require.NotContains(t, v, secret, "no view carries the callback secret")
		require.NotContains(t, v, key)
	}

	envelope := func(i int) []byte {
		raw, err := json.Marshal(apEvent("push", i))
		require.NoError(t, err)
		return raw
	}
	now := time.Now()
	refuse := func(name string, h http.Header, body []byte, reason string) {
		t.Helper()
		a := postRaw(url, h, body)
		require.Equal(t, http.StatusUnauthorized, a.status, "%s: %s", name, a.raw)
		require.Equal(t, "bad_signature", a.body["error"], "%s: %s", name, a.raw)
		require.Equal(t, reason, a.body["reason"], "%s: %s", name, a.raw)
	}
	refuse("stale", agentpushtest.SignedHeader(secret, now.Add(-6*time.Minute), envelope(1)), envelope(1), "stale_timestamp")
	refuse("future", agentpushtest.SignedHeader(secret, now.Add(6*time.Minute), envelope(2)), envelope(2), "stale_timestamp")
	tampered := agentpushtest.SignedHeader(secret, now, envelope(3))
	refuse("tampered", tampered, envelope(4), "bad_signature")
	refuse("wrong secret", agentpushtest.SignedHeader(randomHex(t, 32), now, envelope(5)), envelope(5), "bad_signature")
	legacy := http.Header{"Content-Type": {"application/json"}, agentpushtest.HeaderSignature: {agentpushtest.SignLegacy(secret, envelope(6))}}
	refuse("legacy", legacy, envelope(6), "legacy_signature_rejected")
	refuse("missing", http.Header{"Content-Type": {"application/json"}}, envelope(7), "missing_signature")

	// A valid push lands; the same push again is absorbed.
	for range 2 {
		a := postRaw(url, agentpushtest.SignedHeader(secret, time.Now(), envelope(0)), envelope(0))
		require.Equal(t, http.StatusOK, a.status, a.raw)
		require.EqualValues(t, 1, a.body["events"], a.raw)
	}
	waitUntil(t, n, 20*time.Second, func() bool { return eventCount(t, n, id) >= 1 }, "the pushed event is counted")
	a := postRaw(n.url+"/inbound/sentinel-"+randomHex(t, 16), agentpushtest.SignedHeader(secret, time.Now(), envelope(0)), envelope(0))
	require.Equal(t, http.StatusNotFound, a.status, a.raw)

	stopNode(t, n)
	logs := n.logs.String()
	require.NotContains(t, logs, key, "the key is never logged")
	require.NotContains(t, logs, secret, "the callback secret is never logged")
	require.Equal(t, []string{"evt_push_000"}, inboxEventIDs(t, home, "s1"), "only the validly signed push, once")
}
