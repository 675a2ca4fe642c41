package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"syscall"
	"time"
)

// client is the run's HTTP client of the nodes: no proxy, loopback or
// compose host ports only.
type client struct {
	http  *http.Client
	token string
}

func newClient(token string) *client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	tr.MaxIdleConnsPerHost = 32
	return &client{http: &http.Client{Transport: tr}, token: token}
}

// answer is one HTTP exchange: the status (0: no answer), the body.
type answer struct {
	status int
	body   []byte
}

// do sends one request, bounded by timeout, with the bearer token when
// auth is set.
func (c *client) do(ctx context.Context, timeout time.Duration, method, url string, body []byte, h http.Header, auth bool) (answer, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return answer{}, err
	}
	for k, v := range h {
		req.Header[k] = v
	}
	if auth {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return answer{status: resp.StatusCode}, fmt.Errorf("read the answer: %w", err)
	}
	return answer{status: resp.StatusCode, body: raw}, nil
}

// api sends an authenticated API call to the nodes in turn from first,
// moving on on a connection error or a 503, and decodes a 2xx answer
// into out. Use it only for what is safe to repeat.
func (c *client) api(ctx context.Context, urls []string, first int, method, path string, in, out any) error {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return err
		}
	}
	var errs []error
	for k := range urls {
		u := urls[(first+k)%len(urls)]
		a, err := c.do(ctx, 15*time.Second, method, u+path, body, nil, true)
		switch {
		case err != nil:
			errs = append(errs, err)
			continue
		case a.status == http.StatusServiceUnavailable:
			errs = append(errs, fmt.Errorf("%s %s: 503 %s", method, path, bytes.TrimSpace(a.body)))
			continue
		case a.status >= 300:
			return fmt.Errorf("%s %s: %d %s", method, path, a.status, bytes.TrimSpace(a.body))
		}
		if out != nil {
			if err := json.Unmarshal(a.body, out); err != nil {
				return fmt.Errorf("%s %s: decode the answer: %w", method, path, err)
			}
		}
		return nil
	}
	return fmt.Errorf("no node answered %s %s: %w", method, path, errors.Join(errs...))
}

// notSent reports a transport error that proves the request never
// reached a node (the connection was refused or never made).
func notSent(err error) bool {
	if errors.Is(err, syscall.ECONNREFUSED) {
		return true
	}
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

func (c *client) close() { c.http.CloseIdleConnections() }
