package app_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// sepClient is an MCP Events client written from SEP-3415 alone (it
// shares no code with the server): JSON-RPC 2.0 over streamable HTTP,
// protocol revision 2026-07-28 in the header and in params._meta.
type sepClient struct {
	t     *testing.T
	url   string // the MCP endpoint
	token string
	ids   atomic.Int64
	// session is the Mcp-Session-Id of an earlier revision's initialize.
	session string
}

const sepRevision = "2026-07-28"

// rpcError is a JSON-RPC error as the SEP describes it.
type rpcError struct {
	Code    int            `json:"code"`
	Message string         `json:"message"`
	Data    map[string]any `json:"data"`
}

// rpcMsg is any JSON-RPC message.
type rpcMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *rpcError       `json:"error"`
}

// occurrence is the SEP's EventOccurrence.
type occurrence struct {
	EventID   string          `json:"eventId"`
	Name      string          `json:"name"`
	Timestamp string          `json:"timestamp"`
	Data      json.RawMessage `json:"data"`
	Cursor    *string         `json:"cursor"`
}

// pollResult is the events/poll result.
type pollResult struct {
	ResultType string       `json:"resultType"`
	Events     []occurrence `json:"events"`
	Cursor     *string      `json:"cursor"`
	Truncated  bool         `json:"truncated"`
	HasMore    bool         `json:"hasMore"`
	NextPollMs int64        `json:"nextPollMs"`
}

func newSEPClient(t *testing.T, baseURL, token string) *sepClient {
	return &sepClient{t: t, url: baseURL + "/mcp", token: token}
}

// body builds a request with the revision and empty client capabilities
// in _meta.
func (c *sepClient) body(method string, params map[string]any, revision string) (int64, []byte) {
	id := c.ids.Add(1)
	if params == nil {
		params = map[string]any{}
	}
	meta := map[string]any{"io.modelcontextprotocol/clientCapabilities": map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/events": map[string]any{}}}}
	if revision != "" {
		meta["io.modelcontextprotocol/protocolVersion"] = revision
	}
	params["_meta"] = meta
	raw, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	require.NoError(c.t, err)
	return id, raw
}

func (c *sepClient) post(ctx context.Context, method string, raw []byte, revision string) *http.Response {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(raw))
	require.NoError(c.t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+c.token)
	if revision != "" {
		req.Header.Set("Mcp-Protocol-Version", revision)
		req.Header.Set("Mcp-Method", method)
	} else if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(c.t, err)
	if s := resp.Header.Get("Mcp-Session-Id"); s != "" && revision == "" {
		c.session = s
	}
	return resp
}

// call sends one request and returns its response message (the last
// message of an SSE answer).
func (c *sepClient) call(method string, params map[string]any) rpcMsg {
	return c.callRev(method, params, sepRevision)
}

func (c *sepClient) callRev(method string, params map[string]any, revision string) rpcMsg {
	c.t.Helper()
	_, raw := c.body(method, params, revision)
	resp := c.post(context.Background(), method, raw, revision)
	defer resp.Body.Close()
	var last rpcMsg
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		for m := range sseMessages(resp.Body) {
			last = m
		}
		return last
	}
	b, err := io.ReadAll(resp.Body)
	require.NoError(c.t, err)
	require.NoError(c.t, json.Unmarshal(b, &last), "HTTP %d: %s", resp.StatusCode, b)
	return last
}

// poll calls events/poll and decodes its result (the test fails on an
// error).
func (c *sepClient) poll(name string, args map[string]any, cursor *string, extra map[string]any) pollResult {
	c.t.Helper()
	params := map[string]any{"name": name, "arguments": args, "cursor": cursor}
	for k, v := range extra {
		params[k] = v
	}
	m := c.call("events/poll", params)
	require.Nil(c.t, m.Error, "events/poll answered an error: %+v", m.Error)
	var r pollResult
	require.NoError(c.t, json.Unmarshal(m.Result, &r))
	require.Equal(c.t, "complete", r.ResultType)
	require.NotNil(c.t, r.Cursor, "the server supports replay: a cursor every time")
	return r
}

// pollError calls events/poll and returns its error.
func (c *sepClient) pollError(name string, args map[string]any, cursor *string) *rpcError {
	c.t.Helper()
	m := c.call("events/poll", map[string]any{"name": name, "arguments": args, "cursor": cursor})
	require.NotNil(c.t, m.Error, "expected an error, got %s", m.Result)
	return m.Error
}

// pushStream is an open events/stream.
type pushStream struct {
	id     int64
	msgs   <-chan rpcMsg
	cancel context.CancelFunc
}

// stream opens events/stream; closing it is aborting the request.
func (c *sepClient) stream(name string, args map[string]any, cursor *string) *pushStream {
	c.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	id, raw := c.body("events/stream", map[string]any{"name": name, "arguments": args, "cursor": cursor}, sepRevision)
	resp := c.post(ctx, "events/stream", raw, sepRevision)
	require.Equal(c.t, http.StatusOK, resp.StatusCode)
	require.True(c.t, strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream"), resp.Header.Get("Content-Type"))
	ch := make(chan rpcMsg, 64)
	go func() {
		defer resp.Body.Close()
		defer close(ch)
		for m := range sseMessages(resp.Body) {
			ch <- m
		}
	}()
	s := &pushStream{id: id, msgs: ch, cancel: cancel}
	c.t.Cleanup(cancel)
	return s
}

// next returns the next notification of the stream other than a
// heartbeat (or the heartbeat when want is it), failing past a deadline.
func (s *pushStream) next(t *testing.T, want string) rpcMsg {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case m, ok := <-s.msgs:
			require.True(t, ok, "the stream ended waiting for %s", want)
			require.Equal(t, fmt.Sprint(s.id), subscriptionIDOf(t, m), "every notification carries the stream's id")
			if m.Method == "notifications/events/heartbeat" && want != m.Method {
				continue
			}
			require.Equal(t, want, m.Method, "params %s", m.Params)
			return m
		case <-deadline:
			t.Fatalf("no %s within 30s", want)
		}
	}
}

func subscriptionIDOf(t *testing.T, m rpcMsg) string {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	require.NoError(t, json.Unmarshal(m.Params, &p), string(m.Params))
	return string(p.Meta["io.modelcontextprotocol/subscriptionId"])
}

// sseMessages yields the JSON-RPC messages of SSE data frames.
func sseMessages(r io.Reader) func(func(rpcMsg) bool) {
	return func(yield func(rpcMsg) bool) {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 0, 64*1024), 4<<20)
		var data strings.Builder
		for sc.Scan() {
			line := sc.Text()
			if line == "" {
				if data.Len() > 0 {
					var m rpcMsg
					if json.Unmarshal([]byte(data.String()), &m) == nil && !yield(m) {
						return
					}
					data.Reset()
				}
				continue
			}
			if d, ok := strings.CutPrefix(line, "data:"); ok {
				data.WriteString(strings.TrimPrefix(d, " "))
			}
		}
	}
}

// pushFake delivers events to a fake-provider sentinel through push
// ingress, signed as the fake provider checks (the "webhook delivery").
func pushFake(t *testing.T, baseURL, sentinelID string, events ...map[string]any) {
	t.Helper()
	body, err := json.Marshal(events)
	require.NoError(t, err)
	m := hmac.New(sha256.New, []byte("fake-secret"))
	m.Write(body)
	req, err := http.NewRequest(http.MethodPost, baseURL+"/inbound/sentinel-fk-"+strings.ToLower(sentinelID), bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Fake-Signature", "sha256="+hex.EncodeToString(m.Sum(nil)))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Less(t, resp.StatusCode, 300, string(raw))
}

// fakeEvent is a CloudEvents envelope of the fake provider.
func fakeEvent(id, subject, typ string) map[string]any {
	return map[string]any{"specversion": "1.0", "id": id, "source": "fake", "type": typ, "subject": subject,
		"time": time.Now().UTC().Format(time.RFC3339Nano), "data": map[string]any{"n": id}, "summary": "event " + id,
		"subjects": []string{subject}, "terminal": false}
}

// listedSentinel is a sentinel of `sentinel list`.
type listedSentinel struct {
	ID     string `json:"id"`
	Status string `json:"status"`
	Target struct {
		Kind           string `json:"kind"`
		Mode           string `json:"mode"`
		SessionID      string `json:"sessionId"`
		SubscriptionID string `json:"subscriptionId"`
	} `json:"target"`
	Match []struct {
		Subject string `json:"subject"`
	} `json:"match"`
}

// sentinelsOf lists the node's sentinels through the REST API.
func sentinelsOf(t *testing.T, baseURL, token string) []listedSentinel {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, baseURL+"/sentinels", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out struct {
		Sentinels []listedSentinel `json:"sentinels"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	return out.Sentinels
}

// subscriptionSentinel returns the mcp-events sentinel watching subject in
// mode ("" when none).
func subscriptionSentinel(t *testing.T, baseURL, token, mode, subject string) listedSentinel {
	for _, s := range sentinelsOf(t, baseURL, token) {
		if s.Target.Kind == "mcp-events" && s.Target.Mode == mode && len(s.Match) > 0 && s.Match[0].Subject == subject {
			return s
		}
	}
	return listedSentinel{}
}
