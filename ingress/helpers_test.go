package ingress_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/stretchr/testify/require"

	"github.com/agentproto/sentinel/ingress"
	"github.com/agentproto/sentinel/ingress/httpapi"
)

const token = "t0ken"

type ready struct{}

func (ready) Ready(context.Context) error { return nil }
func (ready) Writable() error             { return nil }

// testNode is a real ingress server on a loopback port with test routes:
//
//	POST /echo      API: decodes a JSON body and echoes it
//	POST /public    Public: answers 200 without reading the body
//	GET  /reqid     Raw: answers the request id
//	GET  /stream    Raw: flushes "start", waits for release, writes "after <ctx err>"
//	POST /longpost  Raw: reads its body, waits for release, writes "after <ctx err>"
type testNode struct {
	url     string
	addr    string
	release chan struct{}
	reqIDs  chan string
}

func startNode(t *testing.T, cfg ingress.Config) *testNode {
	t.Helper()
	n := &testNode{release: make(chan struct{}), reqIDs: make(chan string, 4)}
	cfg.Token = token
	waitThenReport := func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-n.release:
		case <-r.Context().Done():
		}
		_, _ = fmt.Fprintf(w, "after %v\n", r.Context().Err())
	}
	routes := ingress.Routes{
		API: []ingress.Mounter{func(r chi.Router) {
			r.Post("/echo", func(w http.ResponseWriter, r *http.Request) {
				var v map[string]any
				if err := httpapi.Decode(r, &v); err != nil {
					httpapi.WriteError(w, err)
					return
				}
				httpapi.WriteJSON(w, http.StatusOK, v)
			})
		}},
		Public: []ingress.Mounter{func(r chi.Router) {
			r.Post("/public", func(w http.ResponseWriter, _ *http.Request) {
				httpapi.WriteJSON(w, http.StatusOK, map[string]any{"ok": true})
			})
		}},
		Raw: []ingress.Mounter{func(r chi.Router) {
			r.Get("/reqid", func(w http.ResponseWriter, r *http.Request) {
				n.reqIDs <- middleware.GetReqID(r.Context())
				w.WriteHeader(http.StatusNoContent)
			})
			r.Get("/stream", func(w http.ResponseWriter, r *http.Request) {
				_, _ = fmt.Fprint(w, "start\n")
				w.(http.Flusher).Flush()
				waitThenReport(w, r)
			})
			r.Post("/longpost", func(w http.ResponseWriter, r *http.Request) {
				if _, err := io.ReadAll(r.Body); err != nil {
					http.Error(w, err.Error(), http.StatusBadRequest)
					return
				}
				_, _ = fmt.Fprint(w, "start\n")
				w.(http.Flusher).Flush()
				waitThenReport(w, r)
			})
		}},
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ln, err := ingress.Listen("127.0.0.1:0")
	require.NoError(t, err)
	srv := ingress.Serve(ln, ingress.NewHandler(cfg, ready{}, routes, log), log)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	n.addr = srv.Addr()
	n.url = "http://" + n.addr
	return n
}

type answer struct {
	status int
	body   map[string]any
	raw    string
}

// do sends one request; hdr are header name/value pairs ("Host" sets the
// Host header).
func (n *testNode) do(t *testing.T, method, path, body string, hdr ...string) answer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, n.url+path, strings.NewReader(body))
	require.NoError(t, err)
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i] == "Host" {
			req.Host = hdr[i+1]
			continue
		}
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	a := answer{status: resp.StatusCode, raw: string(raw)}
	_ = json.Unmarshal(raw, &a.body)
	return a
}

// rawConn opens a TCP connection and writes head (a request line and
// headers, CRLF-terminated, without the blank line that ends them).
func (n *testNode) rawConn(t *testing.T, head string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", n.addr)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	_, err = io.WriteString(c, head+"\r\n")
	require.NoError(t, err)
	return c, bufio.NewReader(c)
}

// readResponse reads one response from br within d (a deadline, not a
// wait: it returns as soon as the response is there).
func readResponse(t *testing.T, c net.Conn, br *bufio.Reader, d time.Duration) (*http.Response, string) {
	t.Helper()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(d)))
	resp, err := http.ReadResponse(br, nil)
	require.NoError(t, err, "no response within %s", d)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp, string(raw)
}
