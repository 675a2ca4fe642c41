package inbound

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/ingress/api"
	"github.com/agentproto/sentinel/providers"
)

// knownKey is the one hook key the fake knows.
const knownKey = "0123456789abcdef0123456789abcdef"

// fakeInbound is an api.Inbound that knows knownKey and records what it
// was asked.
type fakeInbound struct {
	mu     sync.Mutex
	looked []string
	bodies [][]byte
	// err, when set, is what Inbound answers.
	err error
}

func (f *fakeInbound) KnownHook(_ context.Context, key string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.looked = append(f.looked, key)
	return key == knownKey, nil
}

func (f *fakeInbound) Inbound(_ context.Context, in providers.Inbound) (api.InboundResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.bodies = append(f.bodies, in.Body)
	if f.err != nil {
		return api.InboundResult{}, f.err
	}
	return api.InboundResult{Events: 1, Sentinels: 1, Delivered: 1}, nil
}

func (f *fakeInbound) calls() (looked []string, bodies [][]byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.looked...), append([][]byte(nil), f.bodies...)
}

// serve mounts h (with mw in front) on a real listener.
func serve(t *testing.T, h *Handler, mw ...func(http.Handler) http.Handler) (*fakeInbound, string) {
	t.Helper()
	f := &fakeInbound{}
	h.svc = f
	r := chi.NewRouter()
	r.Use(mw...)
	h.Mount(r)
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	return f, srv.Listener.Addr().String()
}

// send writes head (request line and headers, without the blank line)
// then body on a fresh connection, leaving it open.
func send(t *testing.T, addr, head, body string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	_, err = io.WriteString(c, head+"\r\n\r\n"+body)
	require.NoError(t, err)
	return c, bufio.NewReader(c)
}

// answer reads one response within d (a deadline: it returns as soon as
// the response is there).
func answer(t *testing.T, c net.Conn, br *bufio.Reader, d time.Duration) (int, string) {
	t.Helper()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(d)))
	resp, err := http.ReadResponse(br, nil)
	require.NoError(t, err, "no answer within %s", d)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}
