package cluster_test

import (
	"bufio"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/e2e/e2etest"
)

// fakeSecret signs the fake provider's push deliveries (its default).
const fakeSecret = "fake-secret"

// promptly bounds the time from a stored delivery on one node to the
// message on another node's reads: generous for a loaded 2-core machine,
// far below any poll interval (the tests' are 60 s idle here).
const promptly = 10 * time.Second

// fakeEnvelope is a CloudEvent for the fake provider's push ingress.
func fakeEnvelope(t *testing.T, id, subject string) []byte {
	t.Helper()
	repo, _, _ := strings.Cut(subject, "#")
	raw, err := json.Marshal(map[string]any{
		"specversion": "1.0", "id": id, "source": "//agentproto.local/sentinel/fake", "type": "github.check_suite.completed",
		"subject": subject, "subjects": []string{subject, repo}, "time": "2026-11-01T10:00:00Z",
		"summary": "checks passed on " + subject + " (" + id + ")", "terminal": false, "data": map[string]any{"id": id},
	})
	require.NoError(t, err)
	return raw
}

// fakePush posts body to the fake provider's ingress route of sentinel id
// on base, signed with the fake's secret.
func fakePush(base, id string, body []byte) (answer, error) {
	return call(base, "", "POST", fakeRoute(id), body, fakeHeaders(body))
}

// fakeRoute is the fake provider's ingress path of sentinel id.
func fakeRoute(id string) string { return "/inbound/sentinel-fk-" + strings.ToLower(id) }

// fakeHeaders sign body for the fake provider's ingress.
func fakeHeaders(body []byte) http.Header {
	m := hmac.New(sha256.New, []byte(fakeSecret))
	m.Write(body)
	h := http.Header{}
	h.Set("X-Fake-Signature", "sha256="+hex.EncodeToString(m.Sum(nil)))
	return h
}

// sseMessages opens GET /sessions/{session}/inbox/stream on a and sends
// every message event's data on the returned channel until ctx ends. It
// returns once the stream answered 200.
func sseMessages(ctx context.Context, t *testing.T, a api, session string) <-chan inboxMessage {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, "GET", a.url+"/sessions/"+session+"/inbox/stream", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+a.token)
	resp, err := (&http.Client{}).Do(req) // no timeout: the stream lives until ctx ends
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	out := make(chan inboxMessage, 16)
	go func() {
		defer resp.Body.Close()
		defer close(out)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		event := ""
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: ") && event == "message":
				var m inboxMessage
				if json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &m) == nil {
					select {
					case out <- m:
					case <-ctx.Done():
						return
					}
				}
			case line == "":
				event = ""
			}
		}
	}()
	return out
}

// createListRemoveDeliverRead: a sentinel created on A is listed on B; a
// push delivered to C lands in the session's inbox and A's plain read,
// `?wait=` long-poll and SSE stream (both opened before the delivery) see
// it promptly; removed on B, it is gone on A and C and C's ingress route
// for it answers 404.
func createListRemoveDeliverRead(t *testing.T, c *e2etest.Cluster) {
	a, b, cc := nodeAPI(t, c, 0), nodeAPI(t, c, 1), nodeAPI(t, c, 2)
	const subject, session = "github:acme/widgets#7", "flow-s1"

	id := createSentinel(t, a, map[string]any{"subject": subject, "types": []string{"*"}, "sessionId": session, "provider": "fake", "until": "never"})
	eventually(t, c, 20*time.Second, func() bool {
		ans := b.do("GET", "/sentinels", nil)
		return ans.status == http.StatusOK && strings.Contains(ans.raw, `"id":"`+id+`"`)
	}, "created on A, listed on B")
	require.Equal(t, http.StatusOK, cc.do("GET", "/sentinels/"+id, nil).status, "and read on C")

	// A's long-poll and stream wait before anything is delivered.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream := sseMessages(ctx, t, a, session)
	type polled struct {
		ans answer
		err error
		at  time.Time
	}
	long := make(chan polled, 1)
	go func() {
		ans, err := call(a.url, a.token, "GET", "/sessions/"+session+"/inbox?wait=45s", nil, nil)
		long <- polled{ans, err, time.Now()}
	}()

	// Deliver to C: stored once, fanned out to the one sentinel.
	const evID = "evt_flow_1"
	var sent time.Time
	eventually(t, c, 20*time.Second, func() bool {
		ans, err := fakePush(cc.url, id, fakeEnvelope(t, evID, subject))
		sent = time.Now()
		// C learns the route from the replicated hooks bucket: until then
		// its answer is a 404.
		return err == nil && ans.status == http.StatusOK
	}, "C takes the delivery for a sentinel created on A")

	select {
	case p := <-long:
		require.NoError(t, p.err)
		require.Equal(t, http.StatusOK, p.ans.status, p.ans.raw)
		require.Contains(t, p.ans.raw, evID, "the long-poll on A returns the message")
		t.Logf("long-poll on A answered %s after the delivery to C was stored", p.at.Sub(sent))
	case <-time.After(promptly):
		t.Fatalf("the long-poll on A did not return within %s\n%s", promptly, tail(c.Logs(), 100_000))
	}
	select {
	case m, ok := <-stream:
		require.True(t, ok, "the stream ended")
		require.Equal(t, evID, m.Data.ID)
		t.Logf("stream on A delivered it %s after the delivery to C was stored", time.Since(sent))
	case <-time.After(promptly):
		t.Fatalf("the stream on A delivered nothing within %s\n%s", promptly, tail(c.Logs(), 100_000))
	}
	msgs := readInbox(t, a, session)
	require.Equal(t, []string{evID}, eventIDs(msgs), "a plain read on A: the message, once")

	// The same delivery again, to B this time: absorbed, nothing new.
	ans, err := fakePush(b.url, id, fakeEnvelope(t, evID, subject))
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, ans.status, ans.raw)

	// Removed on B: gone on A and C, and so is C's ingress route.
	ans = b.do("DELETE", "/sentinels/"+id, nil)
	require.Equal(t, http.StatusOK, ans.status, ans.raw)
	for _, n := range []api{a, cc} {
		eventually(t, c, 20*time.Second, func() bool { return n.do("GET", "/sentinels/"+id, nil).status == http.StatusNotFound },
			"removed on B, gone on %s", n.url)
	}
	eventually(t, c, 20*time.Second, func() bool {
		ans, err := fakePush(cc.url, id, fakeEnvelope(t, "evt_flow_2", subject))
		return err == nil && ans.status == http.StatusNotFound
	}, "C's route of the removed sentinel answers 404")
	require.Equal(t, []string{evID}, eventIDs(readInbox(t, cc, session)), "nothing more landed; C reads the same inbox")
	select {
	case m := <-stream:
		t.Fatalf("the stream delivered a second message: %+v", m)
	default:
	}
}
