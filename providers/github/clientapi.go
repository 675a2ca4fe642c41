package github

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/agentproto/sentinel/providers"
)

// API makes one REST call in-process with the same contract as
// Runner.API, so the webhook provider manages hooks (create, update,
// delete, redeliveries) without gh: path is relative to the REST root,
// body (nil for none) is sent as JSON. err is nil for 2xx and 304; a
// status >= 400 comes back with its header and body and a
// *providers.Error classified like Get's (rate limits also start a wait);
// a 401 drops the cached token and is retried once. No answer at all is
// status 0 with a retryable ReasonNetwork error. Nothing is cached: only
// Get is conditional.
func (c *Client) API(ctx context.Context, method, path string, body []byte) (int, http.Header, []byte, error) {
	return c.APIWithHeader(ctx, method, path, nil, body)
}

// APIWithHeader is API with extra request headers (for example
// If-None-Match, which makes a GET answer 304 with no body and no quota
// spent), like Runner.APIWithHeader. The headers cannot replace the
// credential, Accept or the API version.
func (c *Client) APIWithHeader(ctx context.Context, method, path string, extra http.Header, body []byte) (int, http.Header, []byte, error) {
	if method == "" {
		method = http.MethodGet
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultRequestTimeout)
		defer cancel()
	}
	if err := CheckRESTPath(path); err != nil {
		return 0, nil, nil, err
	}
	for attempt := 0; ; attempt++ {
		resp, err := c.call(ctx, method, path, extra, body)
		if resp == nil {
			return 0, nil, nil, err
		}
		var pe *providers.Error
		if attempt == 0 && errors.As(err, &pe) && pe.Reason == providers.ReasonAuth {
			c.token.Invalidate()
			continue
		}
		return resp.Status, resp.Header, resp.Body, err
	}
}

// call sends one request of API; a nil *Response means no answer.
func (c *Client) call(ctx context.Context, method, path string, extra http.Header, body []byte) (*Response, error) {
	label := method + " " + strings.TrimPrefix(path, "/")
	if err := c.refuse(path); err != nil {
		return nil, err
	}
	tok, err := c.token.Token(ctx)
	if err != nil {
		return nil, err
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	url := c.base + "/" + strings.TrimPrefix(path, "/")
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", label, err)
	}
	for k, vs := range extra {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Accept", AcceptJSON)
	req.Header.Set(APIVersionHeader, APIVersion)
	req.Header.Set("User-Agent", c.ua)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	c.mu.Lock()
	c.stats.Requests++
	c.mu.Unlock()
	hr, err := c.http.Do(req)
	if err != nil {
		return nil, &providers.Error{Reason: providers.ReasonNetwork, Retryable: true,
			Message: fmt.Sprintf("%s: %s", label, RedactToken(err.Error(), tok))}
	}
	defer hr.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(hr.Body, DefaultMaxBody+1))
	c.report(hr.StatusCode, hr.Header, raw, extra.Get("If-None-Match") != "")
	if err != nil {
		return nil, &providers.Error{Reason: providers.ReasonNetwork, Retryable: true,
			Message: fmt.Sprintf("%s: reading body: %s", label, RedactToken(err.Error(), tok))}
	}
	if len(raw) > DefaultMaxBody {
		return nil, &providers.Error{Reason: providers.ReasonInvalid, Message: fmt.Sprintf("%s: body exceeds %d bytes", label, DefaultMaxBody)}
	}
	resp := &Response{Status: hr.StatusCode, Header: hr.Header, Body: raw, ETag: hr.Header.Get("ETag"),
		URL: url, Link: hr.Header.Get("Link"), Items: -1}
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.recordRate(hr.Header)
	if resp.Status != http.StatusNotModified {
		c.stats.QuotaUsed++
	}
	if resp.Status >= 400 {
		return resp, c.failure(label, resp, now)
	}
	return resp, nil
}
