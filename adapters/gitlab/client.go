package gitlab

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/agentproto/sentinel/providers/adapter/kit"
)

// DefaultBaseURL is gitlab.com.
const DefaultBaseURL = "https://gitlab.com"

// maxBody caps one API answer.
const maxBody = 4 << 20

// client calls the REST API v4 of one GitLab with one token.
type client struct {
	base  *url.URL
	token string
	http  *http.Client
}

// newClient checks the base URL (https, a host, no credentials) and
// returns a client.
func newClient(base, token string, hc *http.Client) (*client, error) {
	if base == "" {
		base = DefaultBaseURL
	}
	u, err := url.Parse(strings.TrimRight(strings.TrimSpace(base), "/"))
	switch {
	case err != nil || u.Host == "":
		return nil, kit.Errorf(kit.ReasonSetup, "baseUrl must be an absolute https URL (https://gitlab.example.com)")
	case u.Scheme != "https":
		return nil, kit.Errorf(kit.ReasonSetup, "baseUrl must be https (a token is never sent in clear)")
	case u.User != nil || u.RawQuery != "" || u.Fragment != "":
		return nil, kit.Errorf(kit.ReasonSetup, "baseUrl must not carry credentials, a query or a fragment")
	}
	if token == "" {
		return nil, kit.Errorf(kit.ReasonSetup, "no GitLab token: run `sentinel setup gitlab --field token` (or set GITLAB_TOKEN)")
	}
	return &client{base: u, token: token, http: hc}, nil
}

// get fetches path (under /api/v4) into out, conditionally on etag: it
// returns notModified when GitLab answers 304, and the answer's ETag.
func (c *client) get(ctx context.Context, path, etag string, out any) (newETag string, notModified bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base.String()+"/api/v4"+path, nil)
	if err != nil {
		return "", false, kit.Errorf(kit.ReasonInvalid, "request %s: %v", path, err)
	}
	req.Header.Set("PRIVATE-TOKEN", c.token)
	req.Header.Set("Accept", "application/json")
	if etag != "" {
		req.Header.Set("If-None-Match", etag)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return "", false, ctx.Err()
		}
		return "", false, &kit.Error{Reason: kit.ReasonNetwork, Retryable: true, Message: "GET " + path + ": " + c.scrub(err.Error())}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return "", false, &kit.Error{Reason: kit.ReasonNetwork, Retryable: true, Message: "GET " + path + ": reading the answer: " + c.scrub(err.Error())}
	}
	switch {
	case resp.StatusCode == http.StatusNotModified:
		return etag, true, nil
	case resp.StatusCode != http.StatusOK:
		return "", false, classify(resp, path)
	case len(body) > maxBody:
		return "", false, kit.Errorf(kit.ReasonServer, "GET %s: the answer is larger than %d bytes", path, maxBody)
	}
	if err := json.Unmarshal(body, out); err != nil {
		return "", false, kit.Errorf(kit.ReasonServer, "GET %s: the answer is not the expected JSON", path)
	}
	return resp.Header.Get("ETag"), false, nil
}

// scrub removes the token from text that may echo a request.
func (c *client) scrub(s string) string {
	if len(c.token) >= 4 {
		s = strings.ReplaceAll(s, c.token, "[redacted]")
	}
	return s
}

// classify maps an HTTP failure onto the protocol's reasons.
func classify(resp *http.Response, path string) *kit.Error {
	e := &kit.Error{Message: fmt.Sprintf("GET %s: HTTP %d", path, resp.StatusCode)}
	switch s := resp.StatusCode; {
	case s == http.StatusUnauthorized:
		e.Reason, e.Message = kit.ReasonAuth, e.Message+": the token is not valid (run `sentinel setup gitlab --field token`)"
	case s == http.StatusForbidden:
		e.Reason, e.Message = kit.ReasonForbidden, e.Message+": the token lacks the read_api scope or access to the project"
	case s == http.StatusNotFound:
		e.Reason = kit.ReasonNotFound
	case s == http.StatusTooManyRequests:
		e.Reason, e.Retryable, e.RetryAfter = kit.ReasonRateLimited, true, time.Minute
		if n, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && n >= 0 {
			e.RetryAfter = time.Duration(n) * time.Second
		}
	case s >= 500:
		e.Reason, e.Retryable = kit.ReasonServer, true
	default:
		e.Reason = kit.ReasonInvalid
	}
	return e
}

// projectPath is the URL-encoded project id of a path (group%2Fproject).
func projectPath(project string) string { return "/projects/" + url.PathEscape(project) }
