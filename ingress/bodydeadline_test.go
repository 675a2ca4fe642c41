package ingress_test

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/ingress"
)

const slowEcho = "POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + token + "\r\nContent-Length: 100\r\n\r\n{\"a\":"

func TestSlowBodiesAreCutAtTheBodyDeadline(t *testing.T) {
	n := startNode(t, ingress.Config{BodyReadTimeout: 300 * time.Millisecond})
	c, br := n.rawConn(t, slowEcho)
	// The client never sends the rest; the node answers on its own.
	resp, raw := readResponse(t, c, br, 10*time.Second)
	require.Equal(t, http.StatusRequestTimeout, resp.StatusCode, raw)
	require.Contains(t, raw, `"error":"body_timeout"`)
}

// openStream starts a request and returns its body once the handler has
// flushed "start".
func openStream(t *testing.T, ctx context.Context, method, url, body string) *bufio.Reader {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { _ = resp.Body.Close() })
	require.Equal(t, http.StatusOK, resp.StatusCode)
	br := bufio.NewReader(resp.Body)
	line, err := br.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "start\n", line)
	return br
}

func TestStreamsOutliveTheBodyDeadline(t *testing.T) {
	n := startNode(t, ingress.Config{BodyReadTimeout: 300 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// A bodiless stream (SSE, ?wait=) and a POST whose body is read before
	// it streams (MCP) are both open...
	sse := openStream(t, ctx, "GET", n.url+"/stream", "")
	post := openStream(t, ctx, "POST", n.url+"/longpost", `{"jsonrpc":"2.0"}`)
	// ...while a slow body is cut: the body deadline has passed for sure.
	c, br := n.rawConn(t, slowEcho)
	resp, raw := readResponse(t, c, br, 10*time.Second)
	require.Equal(t, http.StatusRequestTimeout, resp.StatusCode, raw)
	// Both streams are still alive, their contexts never cancelled.
	close(n.release)
	for name, s := range map[string]*bufio.Reader{"sse": sse, "post": post} {
		line, err := s.ReadString('\n')
		require.NoError(t, err, name)
		require.Equal(t, "after <nil>\n", line, "%s: the stream outlived the body deadline", name)
	}
}
