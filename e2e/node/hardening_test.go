package node_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// doWith is do with extra header name/value pairs ("Host" sets the Host
// header) and no preset Content-Type.
func (n *node) doWith(method, path, body, token string, hdr ...string) answer {
	n.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, n.url+path, strings.NewReader(body))
	require.NoError(n.t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i] == "Host" {
			req.Host = hdr[i+1]
			continue
		}
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(n.t, err)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	a := answer{status: resp.StatusCode, raw: string(raw)}
	_ = json.Unmarshal(raw, &a.body)
	return a
}

// rawRequest writes head (request line and headers, no blank line) and
// body on a fresh connection and reads one answer within d: a deadline,
// the answer is read as soon as it comes.
func (n *node) rawRequest(head, body string, d time.Duration) (int, string) {
	n.t.Helper()
	u, err := url.Parse(n.url)
	require.NoError(n.t, err)
	c, err := net.Dial("tcp", u.Host)
	require.NoError(n.t, err)
	defer c.Close()
	_, err = io.WriteString(c, head+"\r\n\r\n"+body)
	require.NoError(n.t, err)
	require.NoError(n.t, c.SetReadDeadline(time.Now().Add(d)))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(n.t, err, "no answer within %s", d)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

// mcpWatch is a stateless-era tools/call of sentinel_watch whose label pads
// it to about size bytes.
func mcpWatch(size int) string {
	return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
		`"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}},` +
		`"name":"sentinel_watch","arguments":{"subject":"github:o/r#1","label":"` + strings.Repeat("x", size) + `"}}}`
}

func TestHostileRequestsAreRefused(t *testing.T) {
	n := startNode(t, t.TempDir(),
		"AGENTPROTO_PUBLIC_URL=https://pub.example.test",
		"AGENTPROTO_ALLOWED_HOSTS=sentinel.lan",
		"AGENTPROTO_BODY_READ_TIMEOUT=1s",
		"AGENTPROTO_MAX_STREAMS_PER_SESSION=1",
	)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(n.url, "http://"))

	// Host: loopback, allowed_hosts and the public URL's host pass; a
	// rebinding name does not, before the token is even looked at.
	for _, h := range []string{"localhost:" + port, "sentinel.lan:" + port, "pub.example.test"} {
		require.Equal(t, http.StatusOK, n.doWith("GET", "/sentinels", "", n.token, "Host", h).status, h)
	}
	a := n.doWith("GET", "/sentinels", "", "", "Host", "evil.example:"+port)
	require.Equal(t, http.StatusForbidden, a.status, a.raw)
	require.Equal(t, "forbidden_host", a.body["error"])
	require.Equal(t, http.StatusOK, n.doWith("GET", "/healthz", "", "", "Host", "evil.example").status, "probes answer any Host")

	// A page of another origin cannot post, not even to push ingress (a
	// CORS-simple request); curl -d with the token can.
	a = n.doWith("POST", "/inbound/sentinel-"+randomHex(t, 16), "{}", "", "Origin", "http://localhost:3000", "Content-Type", "text/plain")
	require.Equal(t, http.StatusForbidden, a.status, a.raw)
	require.Equal(t, "forbidden_origin", a.body["error"])
	a = n.doWith("POST", "/sessions", `{"id":"s1"}`, n.token, "Content-Type", "application/x-www-form-urlencoded")
	require.Equal(t, http.StatusCreated, a.status, a.raw)

	// A body that trickles in is cut at body_read_timeout...
	status, raw := n.rawRequest(fmt.Sprintf("POST /sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\nContent-Length: 100", n.token), `{"id":`, 20*time.Second)
	require.Equal(t, http.StatusRequestTimeout, status, raw)
	require.Contains(t, raw, `"body_timeout"`)

	// ...but a stream outlives it: it still delivers a message sent after a
	// slow body was cut (so after the deadline).
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", n.url+"/sessions/s1/inbox/stream", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+n.token)
	stream, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer stream.Body.Close()
	require.Equal(t, http.StatusOK, stream.StatusCode)
	lines := bufio.NewReader(stream.Body)
	first, err := lines.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, ": sentinel inbox stream\n", first)
	status, raw = n.rawRequest(fmt.Sprintf("POST /sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\nContent-Length: 100", n.token), `{"id":`, 20*time.Second)
	require.Equal(t, http.StatusRequestTimeout, status, raw)

	// One stream per session (max_streams_per_session=1): a second stream
	// or a long-poll of s1 is refused, another session's is not.
	a = n.doWith("GET", "/sessions/s1/inbox?wait=5s", "", n.token)
	require.Equal(t, http.StatusTooManyRequests, a.status, a.raw)
	require.Equal(t, "too_many_streams", a.body["error"])
	a = n.doWith("GET", "/sessions/s2/inbox?wait=1s", "", n.token)
	require.Equal(t, http.StatusOK, a.status, a.raw)

	a = n.doWith("POST", "/sessions/s1/messages", `{"text":"after the deadline"}`, n.token)
	require.Equal(t, http.StatusCreated, a.status, a.raw)
	for {
		l, err := lines.ReadString('\n')
		require.NoError(t, err, "the stream ended")
		if strings.HasPrefix(l, "data: ") {
			require.Contains(t, l, "after the deadline")
			break
		}
	}

	// An unknown hook key is answered before its body: 25 MiB declared,
	// a few bytes sent, the rest never.
	status, raw = n.rawRequest("POST /inbound/sentinel-"+randomHex(t, 16)+" HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 26214400", "{", 10*time.Second)
	require.Equal(t, http.StatusNotFound, status, raw)
}
