// Package apiclient is the typed HTTP client of the sentinel API, used by
// the CLI, the stdio MCP bridge and tests. Errors from a node come back as
// *Error with the catalogue code. A Client may know several nodes of one
// service and fails over between them (failover.go).
package apiclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
)

// DialTimeout bounds the connection to one node in the clients New and
// NewNodes build, so a node that drops packets costs seconds, not the
// whole request timeout, before the next node is tried.
const DialTimeout = 5 * time.Second

// RequestTimeout is the default bound of one attempt on one node.
const RequestTimeout = 60 * time.Second

// Client talks to a sentinel service through one or more of its nodes.
// Every node serves every route, so a request may go to any of them: Do
// starts at the current node (the last one that answered) and moves on
// along URLs only when that is safe (see Do). Copies of a Client share the
// current node. A Client is safe for concurrent use.
type Client struct {
	// URLs are the nodes' base URLs, without a trailing slash, in the
	// order they are tried.
	URLs []string
	// Token is the API bearer token (the same secret on every node).
	Token string
	// HTTP sends each attempt; its Timeout bounds one attempt.
	HTTP *http.Client

	// cur is the index in URLs of the current node, shared by copies; nil
	// (a Client built by hand) always starts at the first node.
	cur *atomic.Int32
	// answer, when set (KeepAnswer), receives the raw body of each 2xx
	// answer.
	answer *json.RawMessage
}

// KeepAnswer returns a copy of the client (sharing its current node) that
// stores the raw body of every 2xx answer in *raw, as the node sent it:
// the CLI's --json prints it verbatim after a typed call. A copy is meant
// for one call at a time.
func (c *Client) KeepAnswer(raw *json.RawMessage) *Client {
	cc := *c
	cc.answer = raw
	return &cc
}

// New returns a client of one node (see NewNodes).
func New(baseURL, token string) *Client {
	return NewNodes([]string{baseURL}, token)
}

// NewNodes returns a client of the nodes at urls (tried in that order,
// the first as the current one) with a RequestTimeout per attempt and a
// DialTimeout per connection.
func NewNodes(urls []string, token string) *Client {
	clean := make([]string, len(urls))
	for i, u := range urls {
		clean[i] = strings.TrimRight(u, "/")
	}
	tr := http.DefaultTransport
	if dt, ok := http.DefaultTransport.(*http.Transport); ok {
		t := dt.Clone()
		t.DialContext = (&net.Dialer{Timeout: DialTimeout, KeepAlive: 30 * time.Second}).DialContext
		tr = t
	}
	return &Client{URLs: clean, Token: token, HTTP: &http.Client{Timeout: RequestTimeout, Transport: tr}, cur: new(atomic.Int32)}
}

// Error is an error answer of a node.
type Error struct {
	Status  int
	Code    string
	Message string
	// AfterLostAnswer is the node whose answer to an earlier attempt of
	// this DELETE was lost, when this 404 came from the retry: that
	// attempt most likely did the removal ("" otherwise).
	AfterLostAnswer string
}

func (e *Error) Error() string {
	if e.Message != "" {
		return fmt.Sprintf("%s: %s", e.Code, e.Message)
	}
	return fmt.Sprintf("%s (HTTP %d)", e.Code, e.Status)
}

// ErrUnreachable is matched by the error of a request no node performed:
// every node refused the connection, timed out before the request was
// sent, or answered 503 (see NodesError).
var ErrUnreachable = errors.New("sentinel node unreachable")

// ErrOutcomeUnknown is matched by the error of a request that is not safe
// to repeat (a POST) when it reached a node but its answer was lost: the
// connection dropped after the request was written, the attempt timed out
// waiting for the answer, or the answer was cut off. The node may or may
// not have performed it, so it is not sent to another node; check (e.g.
// `sentinel list`) before repeating it.
var ErrOutcomeUnknown = errors.New("the request reached a node but its answer was lost, so it may or may not have been done")

// Do sends a request with an optional JSON body and decodes a 2xx JSON
// answer into out (when non-nil). A non-2xx answer is an *Error.
//
// Failover: the request goes to the current node first, then to the next
// ones in order, each at most once, and stops at the first answer other
// than 503. It moves to the next node when the request certainly was not
// performed: the connection failed before the request was written
// (refused, DNS, dial timeout, TLS handshake), or the node answered 503
// (a node answers 503 only when it did not perform the request, see
// docs/api.md). A GET or a DELETE whose answer was lost is repeated on the
// next node too (repeating them is safe: a DELETE of what is gone answers
// 404, which then says so, see Error.AfterLostAnswer); any other method
// whose answer was lost stops with ErrOutcomeUnknown. The node that
// answered becomes the current one. When no node performed the request
// the error is a *NodesError (matching ErrUnreachable). A done ctx stops
// the failover.
func (c *Client) Do(ctx context.Context, method, path string, body, out any) error {
	var raw []byte
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("encode request: %w", err)
		}
		raw = b
	}
	return c.failover(ctx, method, path, raw, out)
}

// Raw sends a request and returns the raw 2xx body (for --json output).
func (c *Client) Raw(ctx context.Context, method, path string, body any) (json.RawMessage, error) {
	var out json.RawMessage
	if err := c.Do(ctx, method, path, body, &out); err != nil {
		return nil, err
	}
	return out, nil
}
