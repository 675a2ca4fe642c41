package apiclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync/atomic"
)

// NodesError is the failure of a request that no node performed: each
// node's failure in the order tried. It matches ErrUnreachable, and
// errors.As finds a node's *Error (a 503 answer) through it.
type NodesError struct {
	Failures []NodeFailure
}

// NodeFailure is why one node did not perform a request.
type NodeFailure struct {
	URL string
	Err error
}

func (e *NodesError) Error() string {
	parts := make([]string, 0, len(e.Failures))
	for _, f := range e.Failures {
		parts = append(parts, f.URL+": "+f.Err.Error())
	}
	return ErrUnreachable.Error() + ": " + strings.Join(parts, "; ")
}

// Unwrap returns ErrUnreachable and every node's error.
func (e *NodesError) Unwrap() []error {
	out := []error{ErrUnreachable}
	for _, f := range e.Failures {
		out = append(out, f.Err)
	}
	return out
}

// attempt is the result of one request to one node.
type attempt struct {
	// status is the HTTP status of a complete answer (0: none came back).
	status int
	// sent reports that the request was written to the node (its headers
	// at least), so the node may have acted on it.
	sent bool
	err  error
}

// repeatable reports whether a request whose answer was lost may be sent
// again: reads, and DELETE (removing what is gone answers 404).
func repeatable(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodDelete:
		return true
	}
	return false
}

// failover runs Do's failover over the nodes (see Do).
func (c *Client) failover(ctx context.Context, method, path string, body []byte, out any) error {
	n := len(c.URLs)
	if n == 0 {
		return &NodesError{Failures: []NodeFailure{{URL: "(none)", Err: errors.New("no node URL given")}}}
	}
	route, _, _ := strings.Cut(path, "?")
	start := c.current(n)
	var failed []NodeFailure
	lost := "" // a node that may have performed this DELETE before its answer was lost
	for i := range n {
		idx := (start + i) % n
		base := c.URLs[idx]
		a := c.send(ctx, method, base, path, body, out)
		switch {
		case a.err == nil:
			c.stick(idx)
			return nil
		case a.status == http.StatusServiceUnavailable:
			failed = append(failed, NodeFailure{URL: base, Err: a.err})
		case a.status != 0:
			c.stick(idx)
			var ae *Error
			if lost != "" && a.status == http.StatusNotFound && errors.As(a.err, &ae) {
				ae.AfterLostAnswer = lost
				ae.Message = strings.TrimSpace(ae.Message + " (an earlier attempt at " + lost + " lost its answer: that attempt most likely removed it)")
			}
			return a.err
		case a.sent && !repeatable(method):
			return fmt.Errorf("%s %s at %s: %w: %w", method, route, base, ErrOutcomeUnknown, a.err)
		case ctx.Err() != nil:
			failed = append(failed, NodeFailure{URL: base, Err: a.err})
			return &NodesError{Failures: failed}
		default:
			if a.sent && method == http.MethodDelete {
				lost = base
			}
			failed = append(failed, NodeFailure{URL: base, Err: a.err})
		}
	}
	return &NodesError{Failures: failed}
}

// send makes one attempt on the node at base.
func (c *Client) send(ctx context.Context, method, base, path string, body []byte, out any) attempt {
	var sent atomic.Bool
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteHeaders: func() { sent.Store(true) }})
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, base+path, rd)
	if err != nil {
		return attempt{err: fmt.Errorf("build request: %w", err)}
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return attempt{sent: sent.Load(), err: transportCause(err)}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		a := attempt{sent: true, err: fmt.Errorf("read answer (HTTP %d): %w", resp.StatusCode, transportCause(err))}
		if resp.StatusCode == http.StatusServiceUnavailable {
			a.status = resp.StatusCode // a 503 is not performed, whatever its body
		}
		return a
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		e := &Error{Status: resp.StatusCode}
		var eb struct {
			Error   string `json:"error"`
			Message string `json:"message"`
		}
		if json.Unmarshal(raw, &eb) == nil && eb.Error != "" {
			e.Code, e.Message = eb.Error, eb.Message
		} else {
			e.Code = http.StatusText(resp.StatusCode)
		}
		return attempt{status: resp.StatusCode, sent: true, err: e}
	}
	if c.answer != nil {
		*c.answer = raw
	}
	if out != nil && len(bytes.TrimSpace(raw)) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			return attempt{status: resp.StatusCode, sent: true, err: fmt.Errorf("decode answer: %w", err)}
		}
	}
	return attempt{status: resp.StatusCode, sent: true}
}

// transportCause drops the *url.Error layer (it repeats the method and
// the full URL) and keeps its cause.
func transportCause(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		return ue.Err
	}
	return err
}

// current returns the index of the current node.
func (c *Client) current(n int) int {
	if c.cur == nil {
		return 0
	}
	if i := int(c.cur.Load()); i >= 0 && i < n {
		return i
	}
	return 0
}

// stick makes the node at idx the current one.
func (c *Client) stick(idx int) {
	if c.cur != nil {
		c.cur.Store(int32(idx))
	}
}
