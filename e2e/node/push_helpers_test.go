package node_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
)

// pushClient posts push deliveries; it allows enough idle connections for
// the concurrent-delivery tests.
var pushClient = &http.Client{
	Timeout:   60 * time.Second,
	Transport: &http.Transport{MaxIdleConnsPerHost: 128, MaxConnsPerHost: 0},
}

// randomHex returns n random bytes as hex.
func randomHex(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return hex.EncodeToString(b)
}

// postRaw POSTs body to url with the headers and returns the answer. It is
// safe to call from several goroutines: it never calls t.Fatal, a transport
// failure comes back as status 0 with the error text in raw.
func postRaw(url string, header http.Header, body []byte) answer {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return answer{raw: err.Error()}
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	resp, err := pushClient.Do(req)
	if err != nil {
		return answer{raw: err.Error()}
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	a := answer{status: resp.StatusCode, raw: string(raw)}
	_ = json.Unmarshal(raw, &a.body)
	return a
}

// ghHeaders are the headers of a GitHub delivery: event, delivery id and,
// when sig is not "", the X-Hub-Signature-256 value.
func ghHeaders(event, guid, sig string) http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", "GitHub-Hookshot/e2e")
	if event != "" {
		h.Set("X-GitHub-Event", event)
	}
	if guid != "" {
		h.Set("X-GitHub-Delivery", guid)
	}
	if sig != "" {
		h.Set("X-Hub-Signature-256", sig)
	}
	return h
}

// waitUntil polls cond every 20 ms until it holds or d has passed, then
// fails with msg and the node's logs.
func waitUntil(t *testing.T, n *node, d time.Duration, cond func() bool, msg string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			logs := ""
			if n != nil {
				logs = n.logs.String()
			}
			t.Fatalf("timed out after %s: %s\n%s", d, fmt.Sprintf(msg, args...), logs)
		}
		<-time.After(20 * time.Millisecond)
	}
}

// sentinelView returns GET /sentinels/{id}'s sentinel object.
func sentinelView(t *testing.T, n *node, id string) map[string]any {
	t.Helper()
	a := n.do("GET", "/sentinels/"+id, nil, n.token)
	require.Equal(t, http.StatusOK, a.status, a.raw)
	v, ok := a.body["sentinel"].(map[string]any)
	require.True(t, ok, a.raw)
	return v
}

// eventCount returns the sentinel's eventCount.
func eventCount(t *testing.T, n *node, id string) int {
	t.Helper()
	c, _ := sentinelView(t, n, id)["eventCount"].(float64)
	return int(c)
}

// createSentinel creates a sentinel through POST /sentinels and returns its
// id.
func createSentinel(t *testing.T, n *node, body map[string]any) string {
	t.Helper()
	a := n.do("POST", "/sentinels", body, n.token)
	require.Equal(t, http.StatusCreated, a.status, "%s\n%s", a.raw, n.logs.String())
	sen, ok := a.body["sentinel"].(map[string]any)
	require.True(t, ok, a.raw)
	id, _ := sen["id"].(string)
	require.NotEmpty(t, id, a.raw)
	return id
}

// inboxEventIDs stops nothing: it reads the stopped node's inbox of session
// and returns the event id of every message, in stream order.
func inboxEventIDs(t *testing.T, home, session string) []string {
	t.Helper()
	var ids []string
	for _, m := range readInbox(t, home, session) {
		var ev sentinel.Event
		require.NoError(t, json.Unmarshal(m.Data, &ev), "inbox message %s", m.ID)
		ids = append(ids, ev.ID)
	}
	return ids
}

// stopNode stops the node with SIGTERM and requires a clean exit.
func stopNode(t *testing.T, n *node) {
	t.Helper()
	_, err := n.stop()
	require.NoError(t, err, n.logs.String())
}
