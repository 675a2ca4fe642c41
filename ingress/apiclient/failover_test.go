package apiclient_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel"
	"github.com/agentproto/sentinel/ingress/apiclient"
)

// testNode is a real HTTP server standing in for one node; it records
// every request it saw as "METHOD /path".
type testNode struct {
	URL  string
	mu   sync.Mutex
	seen []string
}

func newTestNode(t *testing.T, h http.HandlerFunc) *testNode {
	t.Helper()
	n := &testNode{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.mu.Lock()
		n.seen = append(n.seen, r.Method+" "+r.URL.Path)
		n.mu.Unlock()
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	n.URL = srv.URL
	return n
}

func (n *testNode) saw() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.seen...)
}

// deadURL is the address of a node that is gone: connection refused.
func deadURL(t *testing.T) string {
	srv := httptest.NewServer(http.NotFoundHandler())
	u := srv.URL
	srv.Close()
	return u
}

func answer(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

// drop reads the whole request, then closes the connection without an
// answer: the node may have acted on it, the client cannot know.
func drop(t *testing.T) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		conn, _, err := w.(http.Hijacker).Hijack()
		require.NoError(t, err)
		_ = conn.Close()
	}
}

// hang never answers; it returns when the client gives up.
func hang(w http.ResponseWriter, r *http.Request) {
	_, _ = io.ReadAll(r.Body)
	<-r.Context().Done()
}

const unavailableBody = `{"error":"unavailable","message":"no JetStream quorum"}`

func TestGetsFailOverAndStickToTheNodeThatAnswered(t *testing.T) {
	busy := newTestNode(t, answer(503, unavailableBody))
	live := newTestNode(t, answer(200, `{"ok":true,"sentinels":[{"id":"sen_1"}]}`))
	c := apiclient.NewNodes([]string{deadURL(t), busy.URL, live.URL}, "tok")

	list, err := apiclient.Sentinels{C: c}.List(context.Background())
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.Equal(t, []string{"GET /sentinels"}, busy.saw(), "the 503 node was tried")
	require.Equal(t, []string{"GET /sentinels"}, live.saw())

	_, err = apiclient.Sentinels{C: c}.Get(context.Background(), "sen_1")
	require.NoError(t, err)
	require.Len(t, busy.saw(), 1, "the next request starts at the node that answered")
	require.Equal(t, []string{"GET /sentinels", "GET /sentinels/sen_1"}, live.saw())
}

func TestWritesFailOverOnlyWhenNotPerformed(t *testing.T) {
	created := `{"ok":true,"sentinel":{"id":"sen_2"}}`
	cases := []struct {
		name        string
		first       func(t *testing.T) (url string, saw func() []string)
		timeout     time.Duration
		wantRetried bool
	}{
		{name: "connection refused: retried", wantRetried: true,
			first: func(t *testing.T) (string, func() []string) { return deadURL(t), func() []string { return nil } }},
		{name: "503: retried", wantRetried: true,
			first: func(t *testing.T) (string, func() []string) {
				n := newTestNode(t, answer(503, unavailableBody))
				return n.URL, n.saw
			}},
		{name: "connection dropped after the request: not retried",
			first: func(t *testing.T) (string, func() []string) {
				n := newTestNode(t, drop(t))
				return n.URL, n.saw
			}},
		{name: "timeout waiting for the answer: not retried", timeout: 300 * time.Millisecond,
			first: func(t *testing.T) (string, func() []string) {
				n := newTestNode(t, hang)
				return n.URL, n.saw
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			firstURL, firstSaw := tc.first(t)
			live := newTestNode(t, answer(201, created))
			c := apiclient.NewNodes([]string{firstURL, live.URL}, "tok")
			if tc.timeout > 0 {
				c.HTTP.Timeout = tc.timeout
			}
			v, err := apiclient.Sentinels{C: c}.Watch(context.Background(), sentinel.WatchRequest{Subject: "github:o/r#1"}, "s1")
			if tc.wantRetried {
				require.NoError(t, err)
				require.Equal(t, "sen_2", v.ID)
				require.Equal(t, []string{"POST /sentinels"}, live.saw())
				return
			}
			require.Equal(t, []string{"POST /sentinels"}, firstSaw(), "the first node got the request")
			require.Empty(t, live.saw(), "a write whose answer was lost is never sent to a second node")
			require.ErrorIs(t, err, apiclient.ErrOutcomeUnknown)
			require.ErrorIs(t, err, &sentinel.Error{Code: sentinel.CodeOutcomeUnknown})
			require.NotErrorIs(t, err, apiclient.ErrUnreachable)
			require.Contains(t, err.Error(), "POST /sentinels at "+firstURL)
			require.Contains(t, err.Error(), "sentinel_list")
		})
	}
}

// A long-poll whose node dies mid-wait reconnects to the next node, and
// the stretched-timeout copy it uses moves the shared current node.
func TestLongPollReconnectsToTheNextNode(t *testing.T) {
	dying := newTestNode(t, drop(t))
	live := newTestNode(t, answer(200, `{"ok":true,"messages":[{"seq":4,"text":"hi"}],"next":4}`))
	c := apiclient.NewNodes([]string{dying.URL, live.URL}, "tok")
	page, err := apiclient.Inboxes{C: c}.Wait(context.Background(), sentinel.InboxQuery{SessionID: "s1"}, 20*time.Second)
	require.NoError(t, err)
	require.Len(t, page.Messages, 1)
	require.Equal(t, []string{"GET /sessions/s1/inbox"}, dying.saw())
	require.Equal(t, []string{"GET /sessions/s1/inbox"}, live.saw())

	_, err = apiclient.Inboxes{C: c}.Read(context.Background(), sentinel.InboxQuery{SessionID: "s1"})
	require.NoError(t, err)
	require.Len(t, dying.saw(), 1, "the current node moved for every copy of the client")
}

// DELETE is repeated after a lost answer; a 404 from the retry says the
// first attempt most likely did the removal.
func TestDeleteAfterALostAnswer(t *testing.T) {
	dying := newTestNode(t, drop(t))
	live := newTestNode(t, answer(404, `{"error":"sentinel_not_found","message":"sentinel not found"}`))
	c := apiclient.NewNodes([]string{dying.URL, live.URL}, "tok")
	err := apiclient.Sentinels{C: c}.Remove(context.Background(), "sen_1")
	require.Equal(t, []string{"DELETE /sentinels/sen_1"}, live.saw(), "retried")
	require.ErrorIs(t, err, &sentinel.Error{Code: sentinel.CodeSentinelNotFound})
	var ae *apiclient.Error
	require.ErrorAs(t, err, &ae)
	require.Equal(t, dying.URL, ae.AfterLostAnswer)
	require.Contains(t, err.Error(), "an earlier attempt at "+dying.URL+" lost its answer: that attempt most likely removed it")

	// Without a lost answer a 404 is a plain 404.
	c = apiclient.NewNodes([]string{live.URL}, "tok")
	err = apiclient.Sentinels{C: c}.Remove(context.Background(), "sen_1")
	require.ErrorAs(t, err, &ae)
	require.Empty(t, ae.AfterLostAnswer)
	require.Equal(t, "sentinel not found", err.Error())
}

func TestNoNodePerformedTheRequest(t *testing.T) {
	d1, d2 := deadURL(t), deadURL(t)
	c := apiclient.NewNodes([]string{d1, d2}, "tok")
	err := c.Do(context.Background(), http.MethodPost, "/sessions/s1/events", map[string]string{"kind": "turn-end"}, nil)
	require.ErrorIs(t, err, apiclient.ErrUnreachable)
	require.NotErrorIs(t, err, apiclient.ErrOutcomeUnknown)
	var ne *apiclient.NodesError
	require.ErrorAs(t, err, &ne)
	require.Len(t, ne.Failures, 2)
	require.Contains(t, err.Error(), d1+": ")
	require.Contains(t, err.Error(), d2+": ")
	require.ErrorIs(t, apiclient.AsDomain(err), &sentinel.Error{Code: sentinel.CodeUnavailable})

	busy := newTestNode(t, answer(503, unavailableBody))
	c = apiclient.NewNodes([]string{d1, busy.URL}, "tok")
	err = c.Do(context.Background(), http.MethodGet, "/sentinels", nil, nil)
	var ae *apiclient.Error
	require.ErrorAs(t, err, &ae, "the 503 answer stays reachable")
	require.Equal(t, 503, ae.Status)
	require.ErrorIs(t, apiclient.AsDomain(err), &sentinel.Error{Code: sentinel.CodeUnavailable})

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	live := newTestNode(t, answer(200, `{}`))
	c = apiclient.NewNodes([]string{d1, live.URL}, "tok")
	require.ErrorIs(t, c.Do(ctx, http.MethodGet, "/sentinels", nil, nil), context.Canceled)
	require.Empty(t, live.saw(), "a done context stops the failover")
}
