// Package cluster_test drives several built sentinel binaries as one
// service end to end: `sentinel serve` processes on loopback, clustered
// through their embedded nats-servers or sharing an external one, with one
// API token; nodes are SIGKILLed, restarted and cut off while requests,
// pushes and polls flow.
package cluster_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/e2e/e2etest"
)

var binary string

func TestMain(m *testing.M) {
	e2etest.Main(m, &binary)
}

// client sends the test's requests; it allows enough connections for the
// concurrent senders and never waits forever.
var client = &http.Client{
	Timeout:   60 * time.Second,
	Transport: &http.Transport{MaxIdleConnsPerHost: 64},
}

type answer struct {
	status int
	header http.Header
	body   map[string]any
	raw    string
}

// call sends one request to base+path with the bearer token (none when
// ""), a JSON body (raw bytes are sent as they are) and extra headers. It
// never fails the test, so goroutines may use it: a transport error comes
// back as the error.
func call(base, token, method, path string, body any, header http.Header) (answer, error) {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			return answer{}, err
		}
		rd = bytes.NewReader(raw)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, base+path, rd)
	if err != nil {
		return answer{}, err
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return answer{}, fmt.Errorf("read the answer: %w", err)
	}
	a := answer{status: resp.StatusCode, header: resp.Header, raw: string(raw)}
	_ = json.Unmarshal(raw, &a.body)
	return a, nil
}

// api is one node's API as the test uses it.
type api struct {
	t     *testing.T
	url   string
	token string
}

func (a api) do(method, path string, body any) answer {
	a.t.Helper()
	ans, err := call(a.url, a.token, method, path, body, nil)
	require.NoError(a.t, err, "%s %s%s", method, a.url, path)
	return ans
}

// nodeAPI is node i's API with the cluster's token.
func nodeAPI(t *testing.T, c *e2etest.Cluster, i int) api {
	return api{t: t, url: c.URLs()[i], token: c.Token}
}

// createSentinel creates a sentinel through POST /sentinels on a and
// returns its id.
func createSentinel(t *testing.T, a api, body map[string]any) string {
	t.Helper()
	ans := a.do("POST", "/sentinels", body)
	require.Equal(t, http.StatusCreated, ans.status, ans.raw)
	sen, ok := ans.body["sentinel"].(map[string]any)
	require.True(t, ok, ans.raw)
	id, _ := sen["id"].(string)
	require.NotEmpty(t, id, ans.raw)
	return id
}

// eventually polls cond every 20 ms until it holds or d passes, then fails
// with msg and the cluster's logs.
func eventually(t *testing.T, c *e2etest.Cluster, d time.Duration, cond func() bool, msg string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			logs := ""
			if c != nil {
				logs = tail(c.Logs(), 200_000)
			}
			t.Fatalf("timed out after %s: %s\n%s", d, fmt.Sprintf(msg, args...), logs)
		}
		<-time.After(20 * time.Millisecond)
	}
}

// within polls cond every 20 ms for up to d and reports whether it held.
func within(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		<-time.After(20 * time.Millisecond)
	}
	return true
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "...\n" + s[len(s)-n:]
}

// inboxMessage is the part of an inbox message the tests read.
type inboxMessage struct {
	ID   string `json:"id"`
	Seq  uint64 `json:"seq"`
	Text string `json:"text"`
	Data struct {
		ID      string `json:"id"`
		Subject string `json:"subject"`
	} `json:"data"`
}

// readInbox reads the whole inbox of session through GET
// /sessions/{id}/inbox on a, page by page, and returns the messages in
// order.
func readInbox(t *testing.T, a api, session string) []inboxMessage {
	t.Helper()
	msgs, err := tryReadInbox(a, session)
	require.NoError(t, err)
	return msgs
}

// tryReadInbox is readInbox that returns a failed request or answer as an
// error instead of failing the test.
func tryReadInbox(a api, session string) ([]inboxMessage, error) {
	var out []inboxMessage
	after := uint64(0)
	for {
		ans, err := call(a.url, a.token, "GET", fmt.Sprintf("/sessions/%s/inbox?after=%d&limit=500", session, after), nil, nil)
		if err != nil {
			return nil, err
		}
		if ans.status != http.StatusOK {
			return nil, fmt.Errorf("GET %s inbox of %s: %d %s", a.url, session, ans.status, ans.raw)
		}
		var page struct {
			Messages []inboxMessage `json:"messages"`
			Next     uint64         `json:"next"`
		}
		if err := json.Unmarshal([]byte(ans.raw), &page); err != nil {
			return nil, fmt.Errorf("inbox page %s: %w", ans.raw, err)
		}
		out = append(out, page.Messages...)
		if len(page.Messages) == 0 || page.Next <= after {
			return out, nil
		}
		after = page.Next
	}
}

// inboxHolds waits until session's inbox on a holds want's count of
// messages, riding out failed reads (a stream leader being elected), and
// requires exactly want, in order. Failed reads are logged once each.
func inboxHolds(t *testing.T, c *e2etest.Cluster, a api, session string, want []string, d time.Duration) {
	t.Helper()
	var got []string
	logged := map[string]bool{}
	eventually(t, c, d, func() bool {
		msgs, err := tryReadInbox(a, session)
		if err != nil {
			if !logged[err.Error()] {
				logged[err.Error()] = true
				t.Logf("inbox read failed (retried): %v", err)
			}
			return false
		}
		got = eventIDs(msgs)
		return len(got) >= len(want)
	}, "%s's inbox holds %d messages on %s", session, len(want), a.url)
	require.Equal(t, want, got, "%s on %s: every event once, in order", session, a.url)
}

// eventIDs are the event ids of inbox messages, in order.
func eventIDs(msgs []inboxMessage) []string {
	out := make([]string, 0, len(msgs))
	for _, m := range msgs {
		out = append(out, m.Data.ID)
	}
	return out
}

// metric returns the value of one series (its exact text before the
// value) of a node's /metrics, and whether it is there.
func metric(t *testing.T, a api, series string) (float64, bool) {
	t.Helper()
	ans, err := call(a.url, a.token, "GET", "/metrics", nil, nil)
	if err != nil || ans.status != http.StatusOK {
		return 0, false
	}
	for _, line := range strings.Split(ans.raw, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			var f float64
			if _, err := fmt.Sscan(v, &f); err == nil {
				return f, true
			}
		}
	}
	return 0, false
}
