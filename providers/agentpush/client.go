package agentpush

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentproto/sentinel/providers"
)

// maxResponseBytes caps one API response (a full page of 1000 events with
// 32 KiB data each fits).
const maxResponseBytes = 64 << 20

// maxErrorText caps the response text quoted in an error message.
const maxErrorText = 200

// client is one authenticated view of the agentpush API. It is built per
// call from the stored setup fields and never logged.
type client struct {
	http    *http.Client
	baseURL string
	key     string
	timeout time.Duration
	now     func() time.Time
}

// do sends method path with an optional JSON body and decodes a JSON
// response into out (when non-nil). A non-2xx answer is a classified
// *providers.Error whose message names the method, path and status; a 204
// or an empty body is success without decoding. No error carries the key.
func (c *client) do(ctx context.Context, method, path string, body, out any) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("agentpush %s %s: encode body: %w", method, path, err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.baseURL+path, rd)
	if err != nil {
		return &providers.Error{Reason: providers.ReasonSetup, Message: c.redact(fmt.Sprintf("agentpush %s %s: bad base URL: %v", method, path, err)), Err: err}
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return c.networkError(method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return c.networkError(method, path, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		e := providers.ClassifyHTTP(resp.StatusCode, resp.Header, c.now())
		e.Message = c.redact(fmt.Sprintf("agentpush %s %s → HTTP %d: %s%s", method, path, resp.StatusCode, errorText(raw), statusHint(resp.StatusCode)))
		return e
	}
	if len(raw) > maxResponseBytes {
		return &providers.Error{Reason: providers.ReasonInvalid, Message: fmt.Sprintf("agentpush %s %s: response larger than %d bytes", method, path, maxResponseBytes)}
	}
	if out == nil || resp.StatusCode == http.StatusNoContent || len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return &providers.Error{Reason: providers.ReasonInvalid, Message: fmt.Sprintf("agentpush %s %s: invalid JSON response: %v", method, path, err), Err: err}
	}
	return nil
}

// networkError wraps a transport failure. The url.Error layer is dropped
// from the message (it repeats the URL) but kept in the chain so
// context.Canceled and DeadlineExceeded stay testable with errors.Is.
func (c *client) networkError(method, path string, err error) error {
	msg := err.Error()
	var ue *url.Error
	if errors.As(err, &ue) {
		msg = ue.Err.Error()
	}
	return &providers.Error{
		Reason:    providers.ReasonNetwork,
		Retryable: true,
		Message:   c.redact(fmt.Sprintf("agentpush %s %s failed: %s", method, path, msg)),
		Err:       err,
	}
}

// redact removes the key from s, in case a misbehaving server or proxy
// echoes the Authorization header back.
func (c *client) redact(s string) string {
	if c.key == "" {
		return s
	}
	return strings.ReplaceAll(s, c.key, "[redacted]")
}

// errorText is the JSON "error" (a string, or an object's "message") of an
// error response, else its first 200 characters.
func errorText(raw []byte) string {
	var body struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(raw, &body) == nil && len(body.Error) > 0 {
		var s string
		if json.Unmarshal(body.Error, &s) == nil && s != "" {
			return truncate(s)
		}
		var obj struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(body.Error, &obj) == nil && obj.Message != "" {
			return truncate(obj.Message)
		}
	}
	return truncate(strings.TrimSpace(string(raw)))
}

// truncate keeps the first maxErrorText characters of s.
func truncate(s string) string {
	if utf8.RuneCountInString(s) <= maxErrorText {
		return s
	}
	r := []rune(s)
	return string(r[:maxErrorText])
}

// subscriptionPath returns /subscriptions/<id><suffix> with id escaped.
func subscriptionPath(id, suffix string) string {
	return "/subscriptions/" + url.PathEscape(id) + suffix
}

// statusHint names the fix of an authentication failure.
func statusHint(status int) string {
	switch status {
	case http.StatusUnauthorized:
		return " (the API key was rejected: run setup_sentinel_provider with provider agentpush and a valid apiKey)"
	case http.StatusForbidden:
		return " (the API key may not do this: check the key's workspace and permissions in agentpush, then run setup_sentinel_provider again)"
	}
	return ""
}
