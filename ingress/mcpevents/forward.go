package mcpevents

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
)

// Forwarder relays events/* requests to a node's streamable HTTP /mcp
// endpoint (the stdio bridge): the answer, JSON or an SSE stream, is
// emitted message by message; ending ctx (notifications/cancelled) aborts
// the request, which ends the stream on the node. With several node URLs
// a request that reached none is tried on the next.
type Forwarder struct {
	// URLs are the nodes' MCP endpoints (<node>/mcp).
	URLs []string
	// Token is the bearer token.
	Token  string
	Client *http.Client
}

// Dispatch implements Dispatcher.
func (f *Forwarder) Dispatch(ctx context.Context, msg []byte, req *Request, emit func([]byte) error) {
	client := f.Client
	if client == nil {
		client = http.DefaultClient
	}
	var lastErr error
	for _, u := range f.URLs {
		hr, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(msg))
		if err != nil {
			lastErr = err
			continue
		}
		hr.Header.Set("Content-Type", "application/json")
		hr.Header.Set("Accept", "application/json, text/event-stream")
		rev := req.Revision()
		if rev == "" {
			rev = LegacyRevision // a request of a client that initialized with it
		}
		hr.Header.Set("Mcp-Protocol-Version", rev)
		hr.Header.Set("Mcp-Method", req.Method)
		if f.Token != "" {
			hr.Header.Set("Authorization", "Bearer "+f.Token)
		}
		resp, err := client.Do(hr)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			lastErr = err
			continue
		}
		relay(ctx, resp, req, emit)
		return
	}
	if ctx.Err() != nil {
		return
	}
	reason := "no node answered"
	if lastErr != nil && !errors.Is(lastErr, context.Canceled) {
		reason = "no node answered: the sentinel node is unreachable"
	}
	_ = emit(errorResponse(req.ID, &RPCError{Code: CodeInternal, Message: "InternalError", Data: map[string]any{"reason": reason}}))
}

// relay emits the messages of one HTTP answer.
func relay(ctx context.Context, resp *http.Response, req *Request, emit func([]byte) error) {
	defer resp.Body.Close()
	ct := resp.Header.Get("Content-Type")
	if !strings.HasPrefix(ct, "text/event-stream") {
		body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
		if err != nil || ctx.Err() != nil {
			return
		}
		body = bytes.TrimSpace(body)
		if _, ok := parse(body); !ok {
			_ = emit(errorResponse(req.ID, &RPCError{Code: CodeInternal, Message: "InternalError",
				Data: map[string]any{"reason": "the node answered HTTP " + resp.Status + " without a JSON-RPC message"}}))
			return
		}
		_ = emit(body)
		return
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64*1024), 8<<20)
	var data []byte
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			if len(data) > 0 {
				if emit(data) != nil {
					return
				}
				data = nil
			}
			continue
		}
		if d, ok := strings.CutPrefix(line, "data:"); ok {
			data = append(data, strings.TrimPrefix(d, " ")...)
		}
	}
}
